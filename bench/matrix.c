/* matrix.c: parser and expansion of the benchmark matrix (grammar: the top of bench/matrix.txt).
 *
 * Robustness contract (the parser is fuzzed): the input is any byte string of a given length. Lines are
 * split on '\n' only; tokens on space, tab, '\r', '\v', '\f'; '#' starts a comment. Tokens are handled as
 * (pointer, length) slices of the caller's buffer and copied only into bounded local arrays; numbers are
 * parsed digit by digit with overflow checks. Every error names the file and the line, and echoes the
 * offending token with non-printable bytes replaced, so a message never carries raw binary.
 */
#include "matrix.h"
#include "textscan.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_TOKENS   96      /* per line: enough for 'kernels' with MGM_MAX_KERNELS ids */
#define MAX_TOKEN    63      /* bytes; longer tokens are an error */
#define MAX_ELEMS    (1LL << 40)   /* M*K, N*K, M*N bound: keeps every byte count far from size_t overflow */
#define MAX_FILE     (16u << 20)

typedef struct tok { const char *p; size_t n; } tok;

typedef struct pctx {
    const char *fname;
    int line;
    char *err;
    size_t errlen;
    /* first line of each once-only directive (0 = not seen) */
    int seen_samples, seen_quick, seen_warmup, seen_seed, seen_ceilings, seen_copy, seen_variants, seen_prune;
} pctx;

static int perr(pctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int perr(pctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mg_text_verr(c->err, c->errlen, c->fname ? c->fname : "<matrix>", c->line, fmt, ap);
    va_end(ap);
    return -1;
}

/* A printable copy of a token for messages (at most 40 bytes, non-printables as '?'). */
static const char *show(tok t, char buf[48]) { return mg_text_show(t.p, t.n, buf); }

static int tok_is(tok t, const char *word) {
    size_t n = strlen(word);
    return t.n == n && strncasecmp(t.p, word, n) == 0;
}

/* Decimal integer with optional sign, digits only, within [lo, hi]. */
static int parse_int(pctx *c, tok t, const char *what, long long lo, long long hi, long long *out) {
    char b[48];
    size_t i = 0;
    int neg = 0;
    if (t.n > 0 && (t.p[0] == '-' || t.p[0] == '+')) { neg = t.p[0] == '-'; i = 1; }
    if (i >= t.n) return perr(c, "%s: expected an integer, got '%s'", what, show(t, b));
    unsigned long long v = 0;
    for (; i < t.n; i++) {
        unsigned char ch = (unsigned char)t.p[i];
        if (ch < '0' || ch > '9') return perr(c, "%s: expected an integer, got '%s'", what, show(t, b));
        if (v > (9223372036854775807ULL - (ch - '0')) / 10)
            return perr(c, "%s: '%s' is out of range [%lld, %lld]", what, show(t, b), lo, hi);
        v = v * 10 + (ch - '0');
    }
    long long s = neg ? -(long long)v : (long long)v;
    if (s < lo || s > hi) return perr(c, "%s: '%s' is out of range [%lld, %lld]", what, show(t, b), lo, hi);
    *out = s;
    return 0;
}

static int parse_double(pctx *c, tok t, const char *what, double lo, double hi, double *out) {
    char b[48], z[MAX_TOKEN + 1];
    if (t.n == 0 || t.n > MAX_TOKEN) return perr(c, "%s: expected a number, got '%s'", what, show(t, b));
    for (size_t i = 0; i < t.n; i++) {
        /* plain decimal only: no hex floats, no inf/nan spellings */
        unsigned char ch = (unsigned char)t.p[i];
        if (!(isdigit(ch) || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' || ch == '-'))
            return perr(c, "%s: expected a number, got '%s'", what, show(t, b));
    }
    memcpy(z, t.p, t.n);
    z[t.n] = '\0';
    char *end = NULL;
    errno = 0;
    double v = strtod(z, &end);
    if (end != z + t.n || errno == ERANGE || !isfinite(v))
        return perr(c, "%s: expected a number, got '%s'", what, show(t, b));
    if (v < lo || v > hi) return perr(c, "%s: %s is out of range [%g, %g]", what, show(t, b), lo, hi);
    *out = v;
    return 0;
}

static int parse_prec(pctx *c, tok t, int *out) {
    char b[48];
    if (tok_is(t, "fp32")) *out = MGM_FP32;
    else if (tok_is(t, "tf32")) *out = MGM_TF32;
    else if (tok_is(t, "bf16")) *out = MGM_BF16;
    else return perr(c, "unknown precision '%s' (fp32, tf32 or bf16)", show(t, b));
    return 0;
}

static int parse_max_dim(pctx *c, tok t, int *out) {
    long long v;
    if (parse_int(c, t, "max_dim", -2, 1, &v)) return -1;
    *out = (v == 1 || v == -1) ? 1 : 0;
    return 0;
}

static int parse_kernel(pctx *c, tok t, int *out) {
    long long v;
    if (parse_int(c, t, "kernel id", 0, 1000000, &v)) return -1;
    *out = (int)v;
    return 0;
}

/* M N K from three tokens: M, N >= 1, K >= 0, element counts bounded. */
static int parse_shape(pctx *c, const tok *t, int64_t *m, int64_t *n, int64_t *k) {
    long long a, b, d;
    if (parse_int(c, t[0], "M", 1, MGM_MAX_DIM, &a) || parse_int(c, t[1], "N", 1, MGM_MAX_DIM, &b) ||
        parse_int(c, t[2], "K", 0, MGM_MAX_DIM, &d))
        return -1;
    if (a * d > MAX_ELEMS || b * d > MAX_ELEMS || a * b > MAX_ELEMS)
        return perr(c, "shape %lldx%lldx%lld is too large (M*K, N*K and M*N must stay <= 2^40)", a, b, d);
    *m = a; *n = b; *k = d;
    return 0;
}

static int once(pctx *c, int *seen, const char *name) {
    if (*seen) return perr(c, "'%s' given twice (first on line %d)", name, *seen);
    *seen = c->line;
    return 0;
}

static int want_args(pctx *c, const tok *t, int nt, int lo, int hi) {
    char b[48];
    if (nt - 1 < lo || nt - 1 > hi) {
        if (lo == hi) return perr(c, "'%s' takes %d argument%s, got %d", show(t[0], b), lo, lo == 1 ? "" : "s", nt - 1);
        return perr(c, "'%s' takes %d to %d arguments, got %d", show(t[0], b), lo, hi, nt - 1);
    }
    return 0;
}

/* variants KEY=V1,V2 ...: every combination of the values, into mx->variants (keys in the order given, values too). */
static int parse_variants(pctx *c, mg_matrix *mx, const tok *t, int nt) {
    char b[48];
    int keys[MG_OPTKEY_COUNT], nvals[MG_OPTKEY_COUNT], vals[MG_OPTKEY_COUNT][MG_OPTKEY_MAX_VALUES];
    unsigned seen = 0;
    long total = 1;
    for (int i = 0; i < nt; i++) {
        const char *eq = memchr(t[i].p, '=', t[i].n);
        const int key = eq ? mg_optkey_find(t[i].p, (size_t)(eq - t[i].p)) : -1;
        if (key < 0) {
            char keys_[160] = "";
            for (int k = 0; k < MG_OPTKEY_COUNT; k++)
                snprintf(keys_ + strlen(keys_), sizeof keys_ - strlen(keys_), "%s%s", k ? ", " : "", mg_optkey_name(k));
            return perr(c, "variants: '%s' is not KEY=V1,V2,... with a KEY of %s", show(t[i], b), keys_);
        }
        if (seen & (1u << key)) return perr(c, "variants: key '%s' given twice", mg_optkey_name(key));
        seen |= 1u << key;
        keys[i] = key;
        nvals[i] = 0;
        const char *p = eq + 1, *end = t[i].p + t[i].n;
        while (p <= end) {
            const char *comma = memchr(p, ',', (size_t)(end - p));
            const char *q = comma ? comma : end;
            const int v = mg_optkey_value(key, p, (size_t)(q - p));
            if (v < 0) return perr(c, "variants: '%s': unknown value for %s", show(t[i], b), mg_optkey_name(key));
            for (int j = 0; j < nvals[i]; j++)
                if (vals[i][j] == v) return perr(c, "variants: '%s': a value given twice", show(t[i], b));
            vals[i][nvals[i]++] = v;   /* at most the key's value count: duplicates are refused above */
            if (!comma) break;
            p = comma + 1;
        }
        total *= nvals[i];
    }
    if (total > MGM_MAX_VARIANTS) return perr(c, "variants: %ld combinations (at most %d)", total, MGM_MAX_VARIANTS);
    mx->nvariants = (int)total;
    for (int v = 0; v < mx->nvariants; v++) {
        mg_optset *o = &mx->variants[v];
        memset(o, 0, sizeof *o);
        for (int i = nt - 1, rest = v; i >= 0; i--) {   /* the last key varies fastest */
            o->set |= 1u << keys[i];
            o->val[keys[i]] = vals[i][rest % nvals[i]];
            rest /= nvals[i];
        }
    }
    return 0;
}

static int directive(pctx *c, mg_matrix *mx, const tok *t, int nt, int *seen_kernels, int *seen_prec, int *seen_md) {
    char b[48];
    long long v;
    if (tok_is(t[0], "samples")) {
        if (want_args(c, t, nt, 1, 1) || once(c, &c->seen_samples, "samples")) return -1;
        /* the benchmark's hygiene rule: a median of at least 20 samples */
        if (parse_int(c, t[1], "samples", 20, 100000, &v)) return -1;
        mx->samples = (int)v;
    } else if (tok_is(t[0], "quick_samples")) {
        if (want_args(c, t, nt, 1, 1) || once(c, &c->seen_quick, "quick_samples")) return -1;
        if (parse_int(c, t[1], "quick_samples", 1, 100000, &v)) return -1;
        mx->quick_samples = (int)v;
    } else if (tok_is(t[0], "warmup")) {
        if (want_args(c, t, nt, 1, 1) || once(c, &c->seen_warmup, "warmup")) return -1;
        if (parse_int(c, t[1], "warmup", 0, 1000, &v)) return -1;
        mx->warmup = (int)v;
    } else if (tok_is(t[0], "seed")) {
        if (want_args(c, t, nt, 1, 1) || once(c, &c->seen_seed, "seed")) return -1;
        if (parse_int(c, t[1], "seed", 0, 9223372036854775807LL, &v)) return -1;
        mx->seed = (uint64_t)v;
    } else if (tok_is(t[0], "kernels")) {
        if (want_args(c, t, nt, 1, MAX_TOKENS)) return -1;
        *seen_kernels = 1;
        for (int i = 1; i < nt; i++) {
            if (tok_is(t[i], "all")) { mx->all_kernels = 1; continue; }
            int id;
            if (parse_kernel(c, t[i], &id)) return -1;
            int dup = 0;
            for (int j = 0; j < mx->nkernels; j++) dup |= mx->kernels[j] == id;
            if (dup) continue;
            if (mx->nkernels >= MGM_MAX_KERNELS) return perr(c, "more than %d kernels listed", MGM_MAX_KERNELS);
            mx->kernels[mx->nkernels++] = id;
        }
    } else if (tok_is(t[0], "precisions")) {
        if (want_args(c, t, nt, 1, MAX_TOKENS)) return -1;
        *seen_prec = 1;
        for (int i = 1; i < nt; i++) {
            int p, dup = 0;
            if (parse_prec(c, t[i], &p)) return -1;
            for (int j = 0; j < mx->nprec; j++) dup |= mx->precs[j] == p;
            if (!dup) mx->precs[mx->nprec++] = p;   /* at most 3 distinct values: no overflow */
        }
    } else if (tok_is(t[0], "max_dims")) {
        if (want_args(c, t, nt, 1, MAX_TOKENS)) return -1;
        *seen_md = 1;
        for (int i = 1; i < nt; i++) {
            int d, dup = 0;
            if (parse_max_dim(c, t[i], &d)) return -1;
            for (int j = 0; j < mx->nmd; j++) dup |= mx->max_dims[j] == d;
            if (!dup) mx->max_dims[mx->nmd++] = d;  /* at most 2 distinct values */
        }
    } else if (tok_is(t[0], "shape")) {
        if (want_args(c, t, nt, 3, 3)) return -1;
        if (mx->nshapes >= MGM_MAX_SHAPES) return perr(c, "more than %d shapes", MGM_MAX_SHAPES);
        mgm_shape *s = &mx->shapes[mx->nshapes];
        if (parse_shape(c, t + 1, &s->m, &s->n, &s->k)) return -1;
        s->line = c->line;
        mx->nshapes++;
    } else if (tok_is(t[0], "limit")) {
        if (want_args(c, t, nt, 2, 2)) return -1;
        if (mx->nlimits >= MGM_MAX_LIMITS) return perr(c, "more than %d limits", MGM_MAX_LIMITS);
        mgm_limit *l = &mx->limits[mx->nlimits];
        if (parse_kernel(c, t[1], &l->kernel) || parse_double(c, t[2], "GFLOP", 0.0, 1e12, &l->gflop)) return -1;
        mx->nlimits++;
    } else if (tok_is(t[0], "row")) {
        if (want_args(c, t, nt, 6, 6 + MG_OPTKEY_COUNT)) return -1;
        if (mx->nrows >= MGM_MAX_ROWS) return perr(c, "more than %d explicit rows", MGM_MAX_ROWS);
        mgm_explicit *r = &mx->rows[mx->nrows];
        r->kernel = -1;   /* 'auto': the library picks, as mg_plan_create with MG_KERNEL_AUTO */
        if (!tok_is(t[1], "auto")) {
            if (parse_int(c, t[1], "kernel id (or auto)", 0, 1000000, &v)) return -1;
            r->kernel = (int)v;
        }
        if (parse_prec(c, t[2], &r->prec) || parse_max_dim(c, t[3], &r->max_dim) ||
            parse_shape(c, t + 4, &r->m, &r->n, &r->k))
            return -1;
        memset(&r->opt, 0, sizeof r->opt);
        char oerr[256];
        for (int i = 7; i < nt; i++)
            if (mg_optset_parse_item(t[i].p, t[i].n, &r->opt, oerr, sizeof oerr)) return perr(c, "row: %s", oerr);
        mx->nrows++;
    } else if (tok_is(t[0], "prune")) {
        if (want_args(c, t, nt, 1, 1) || once(c, &c->seen_prune, "prune")) return -1;
        if (parse_double(c, t[1], "prune", 1.0, 1000.0, &mx->prune)) return -1;
    } else if (tok_is(t[0], "variants")) {
        if (want_args(c, t, nt, 1, MG_OPTKEY_COUNT) || once(c, &c->seen_variants, "variants")) return -1;
        if (parse_variants(c, mx, t + 1, nt - 1)) return -1;
    } else if (tok_is(t[0], "shortcut")) {
        if (want_args(c, t, nt, 3, 4)) return -1;
        if (mx->nshortcuts >= MGM_MAX_SHORTCUTS) return perr(c, "more than %d shortcut lines", MGM_MAX_SHORTCUTS);
        mgm_shortcut *s = &mx->shortcuts[mx->nshortcuts];
        if (parse_shape(c, t + 1, &s->m, &s->n, &s->k)) return -1;
        s->kernel = -1;
        if (nt == 5 && !tok_is(t[4], "auto") && parse_kernel(c, t[4], &s->kernel)) return -1;
        mx->nshortcuts++;
    } else if (tok_is(t[0], "ceilings")) {
        if (want_args(c, t, nt, 3, 3) || once(c, &c->seen_ceilings, "ceilings")) return -1;
        if (parse_shape(c, t + 1, &mx->ceil_m, &mx->ceil_n, &mx->ceil_k)) return -1;
        mx->has_ceilings = 1;
    } else if (tok_is(t[0], "copy_mib")) {
        if (want_args(c, t, nt, 1, 1) || once(c, &c->seen_copy, "copy_mib")) return -1;
        if (parse_int(c, t[1], "copy_mib", 0, 65536, &v)) return -1;
        mx->copy_mib = v;
    } else {
        return perr(c, "unknown directive '%s' (samples, quick_samples, warmup, seed, kernels, precisions, max_dims, "
                       "shape, limit, row, variants, prune, shortcut, ceilings, copy_mib)", show(t[0], b));
    }
    return 0;
}

void mg_matrix_defaults(mg_matrix *mx) {
    memset(mx, 0, sizeof *mx);
    mx->samples = 25;
    mx->quick_samples = 5;
    mx->warmup = 3;
    mx->seed = 42;
    mx->copy_mib = 2048;
}

int mg_matrix_parse(const char *text, size_t len, const char *fname, mg_matrix *mx, char *err, size_t errlen) {
    pctx c;
    memset(&c, 0, sizeof c);
    c.fname = fname;
    c.err = err;
    c.errlen = errlen;
    if (err && errlen) err[0] = '\0';
    if (!mx) return perr(&c, "internal: NULL matrix");
    mg_matrix_defaults(mx);
    if (!text && len) return perr(&c, "internal: NULL text");
    int seen_kernels = 0, seen_prec = 0, seen_md = 0;
    tok t[MAX_TOKENS + 1];
    size_t pos = 0;
    while (pos < len) {
        c.line++;
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        /* tokenize [pos, end) */
        int nt = 0;
        size_t i = pos;
        while (i < end) {
            unsigned char ch = (unsigned char)text[i];
            if (ch == '#') break;
            if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f') { i++; continue; }
            size_t s = i;
            while (i < end) {
                ch = (unsigned char)text[i];
                if (ch == '#' || ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f') break;
                if (ch < 0x20 || ch >= 0x7f)
                    return perr(&c, "unexpected byte 0x%02x (the matrix is plain ASCII text)", ch);
                i++;
            }
            tok tk = {text + s, i - s};
            if (tk.n > MAX_TOKEN) {
                char b[48];
                return perr(&c, "token '%s' is longer than %d bytes", show(tk, b), MAX_TOKEN);
            }
            if (nt >= MAX_TOKENS) return perr(&c, "more than %d tokens on one line", MAX_TOKENS);
            t[nt++] = tk;
        }
        if (nt > 0 && directive(&c, mx, t, nt, &seen_kernels, &seen_prec, &seen_md)) return -1;
        pos = end + 1;   /* past the '\n' (or past len at the end: the loop stops) */
    }
    if (!seen_kernels) mx->all_kernels = 1;
    if (!seen_prec) { mx->nprec = 3; mx->precs[0] = MGM_FP32; mx->precs[1] = MGM_TF32; mx->precs[2] = MGM_BF16; }
    if (!seen_md) { mx->nmd = 2; mx->max_dims[0] = 1; mx->max_dims[1] = 0; }
    if (mx->nshapes == 0 && mx->nrows == 0 && mx->nshortcuts == 0 && !mx->has_ceilings) {
        c.line = c.line > 0 ? c.line : 1;
        return perr(&c, "the matrix is empty: no shape, row, shortcut or ceilings line");
    }
    return 0;
}

int mg_matrix_load(const char *path, mg_matrix *mx, char *err, size_t errlen) {
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        if (err && errlen) snprintf(err, errlen, "%s: cannot open: %s", path ? path : "(null)", strerror(errno));
        return -1;
    }
    char *buf = (char *)malloc(MAX_FILE + 1);
    if (!buf) {
        fclose(f);
        if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t n = fread(buf, 1, MAX_FILE + 1, f);
    int rerr = ferror(f);
    fclose(f);
    if (rerr || n > MAX_FILE) {
        free(buf);
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path, rerr ? "read error" : "larger than 16 MiB: not a matrix file");
        return -1;
    }
    int rc = mg_matrix_parse(buf, n, path, mx, err, errlen);
    free(buf);
    return rc;
}

const char *mgm_prec_name(int prec) {
    switch (prec) {
    case MGM_FP32: return "fp32";
    case MGM_TF32: return "tf32";
    case MGM_BF16: return "bf16";
    default: return "-";
    }
}

double mgm_gflop(int64_t m, int64_t n, int64_t k) { return 2.0 * (double)m * (double)n * (double)k / 1e9; }

/* ---------------------------------------------------------------------------------------------- expansion */

typedef struct rowvec { mgm_row *v; int n, cap; } rowvec;

static int push(rowvec *rv, const mgm_row *r) {
    if (rv->n >= MGM_MAX_EXPANDED) return -1;
    if (rv->n == rv->cap) {
        int cap = rv->cap ? 2 * rv->cap : 256;
        mgm_row *nv = (mgm_row *)realloc(rv->v, (size_t)cap * sizeof *nv);
        if (!nv) return -1;
        rv->v = nv;
        rv->cap = cap;
    }
    rv->v[rv->n++] = *r;
    return 0;
}

typedef struct shapemap { int64_t m[3 * MGM_MAX_SHAPES + MGM_MAX_ROWS + MGM_MAX_SHORTCUTS][3]; int n; } shapemap;

static int shape_order(shapemap *sm, int64_t m, int64_t n, int64_t k) {
    for (int i = 0; i < sm->n; i++)
        if (sm->m[i][0] == m && sm->m[i][1] == n && sm->m[i][2] == k) return i;
    sm->m[sm->n][0] = m; sm->m[sm->n][1] = n; sm->m[sm->n][2] = k;
    return sm->n++;
}

static const mgm_kernel_info *find_known(const mgm_kernel_info *known, int nknown, int id) {
    for (int i = 0; i < nknown; i++)
        if (known[i].id == id) return &known[i];
    return NULL;
}

/* Fills r->skip from the static facts (registry membership, claimed precision, GFLOP limits). */
static void static_skip(const mg_matrix *mx, const mgm_kernel_info *known, int nknown, mgm_row *r) {
    r->skip[0] = '\0';
    if (r->kind != MGM_KERNEL || r->kernel < 0) return;
    const mgm_kernel_info *ki = find_known(known, nknown, r->kernel);
    if (!ki) { snprintf(r->skip, sizeof r->skip, "kernel %d is not in the registry", r->kernel); return; }
    if (!(ki->prec_mask & (1u << r->prec))) {
        snprintf(r->skip, sizeof r->skip, "kernel %d does not claim %s", r->kernel, mgm_prec_name(r->prec));
        return;
    }
    if (r->exempt_limit || r->shortcut) return;
    double g = mgm_gflop(r->m, r->n, r->k);
    for (int i = 0; i < mx->nlimits; i++)
        if (mx->limits[i].kernel == r->kernel && g > mx->limits[i].gflop) {
            snprintf(r->skip, sizeof r->skip, "%.1f GFLOP is above the matrix's limit of %g GFLOP for kernel %d", g,
                     mx->limits[i].gflop, r->kernel);
            return;
        }
}

static int row_cmp(const void *pa, const void *pb) {
    const mgm_row *a = (const mgm_row *)pa, *b = (const mgm_row *)pb;
#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)
    int ca = a->kind < MGM_KERNEL, cb = b->kind < MGM_KERNEL;   /* ceilings first, in kind order */
    CMP(!ca, !cb);
    if (ca) { CMP((int)a->kind, (int)b->kind); return 0; }
    CMP(a->shape_order, b->shape_order);
    CMP(a->kind == MGM_BARE_WRITE, b->kind == MGM_BARE_WRITE);  /* the bare write closes its shape */
    CMP(a->prec, b->prec);
    CMP(b->max_dim, a->max_dim);   /* max_dim 1 (the model's) first */
    CMP(a->shortcut, b->shortcut);
    /* kernel 0 first (the baseline), then by id, auto (-1) last */
    int ka = a->kernel < 0 ? 0x7fffffff : a->kernel, kb = b->kernel < 0 ? 0x7fffffff : b->kernel;
    CMP(ka, kb);
    /* a kernel's option variants: fewer keys set first, then by value (0, auto, first) */
    CMP(a->opt.set, b->opt.set);
    for (int i = 0; i < MG_OPTKEY_COUNT; i++) CMP(a->opt.val[i], b->opt.val[i]);
    /* duplicates: the runnable one (no static skip) first, so dedup keeps it */
    CMP(a->skip[0] != '\0', b->skip[0] != '\0');
    return 0;
#undef CMP
}

static int same_row(const mgm_row *a, const mgm_row *b) {
    return a->kind == b->kind && a->kernel == b->kernel && a->prec == b->prec && a->max_dim == b->max_dim &&
           a->shortcut == b->shortcut && a->m == b->m && a->n == b->n && a->k == b->k && a->opt.set == b->opt.set &&
           memcmp(a->opt.val, b->opt.val, sizeof a->opt.val) == 0;
}

int mg_matrix_expand(const mg_matrix *mx, const mgm_kernel_info *known, int nknown, int only_kernel,
                     mgm_row **rows, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!mx || !rows || (nknown > 0 && !known)) {
        if (err && errlen) snprintf(err, errlen, "mg_matrix_expand: NULL argument");
        return -1;
    }
    *rows = NULL;
    shapemap *sm = (shapemap *)calloc(1, sizeof *sm);
    rowvec rv = {NULL, 0, 0};
    int ids[MGM_MAX_KERNELS + 256], nids = 0;
    if (!sm) goto oom;

    /* the sweep's kernel list */
    if (mx->all_kernels)
        for (int i = 0; i < nknown && nids < (int)(sizeof ids / sizeof ids[0]); i++) ids[nids++] = known[i].id;
    for (int i = 0; i < mx->nkernels; i++) {
        int dup = 0;
        for (int j = 0; j < nids; j++) dup |= ids[j] == mx->kernels[i];
        if (!dup && nids < (int)(sizeof ids / sizeof ids[0])) ids[nids++] = mx->kernels[i];
    }

    mgm_row r;
    if (mx->has_ceilings) {
        for (int kind = MGM_CEIL_COPY; kind <= MGM_CEIL_INT8; kind++) {
            if (kind == MGM_CEIL_COPY && mx->copy_mib == 0) continue;
            memset(&r, 0, sizeof r);
            r.kind = (mgm_kind)kind;
            r.kernel = -1;
            r.max_dim = -1;
            /* the copy and the int8 ceiling have no precision mode of the model (-1: an empty precision column) */
            r.prec = kind == MGM_CEIL_BF16 ? MGM_BF16 : kind == MGM_CEIL_TF32 ? MGM_TF32 : kind == MGM_CEIL_FP32 ? MGM_FP32 : -1;
            if (kind == MGM_CEIL_COPY) { r.m = mx->copy_mib; r.n = 1; r.k = 0; }   /* m carries the MiB */
            else { r.m = mx->ceil_m; r.n = mx->ceil_n; r.k = mx->ceil_k; }
            if (push(&rv, &r)) goto oom;
        }
        for (int kind = MGM_SPLIT_W; kind <= MGM_SPLIT_X; kind++) {
            memset(&r, 0, sizeof r);
            r.kind = (mgm_kind)kind;
            r.kernel = -1;
            r.max_dim = -1;
            r.prec = MGM_FP32;
            r.m = mx->ceil_m; r.n = mx->ceil_n; r.k = mx->ceil_k;
            if (push(&rv, &r)) goto oom;
        }
    }
    /* the sweep */
    for (int s = 0; s < mx->nshapes; s++) {
        const mgm_shape *sh = &mx->shapes[s];
        int order = shape_order(sm, sh->m, sh->n, sh->k);
        for (int p = 0; p < mx->nprec; p++)
            for (int d = 0; d < mx->nmd; d++)
                for (int i = 0; i < nids; i++)
                    for (int v = 0; v < (ids[i] != 0 && mx->nvariants ? mx->nvariants : 1); v++) {
                        memset(&r, 0, sizeof r);
                        r.kind = MGM_KERNEL;
                        r.kernel = ids[i];
                        r.prec = mx->precs[p];
                        r.max_dim = mx->max_dims[d];
                        r.m = sh->m; r.n = sh->n; r.k = sh->k;
                        r.shape_order = order;
                        if (ids[i] != 0 && mx->nvariants) r.opt = mx->variants[v];
                        if (push(&rv, &r)) goto oom;
                    }
    }
    /* explicit rows */
    for (int i = 0; i < mx->nrows; i++) {
        const mgm_explicit *e = &mx->rows[i];
        memset(&r, 0, sizeof r);
        r.kind = MGM_KERNEL;
        r.kernel = e->kernel;
        r.prec = e->prec;
        r.max_dim = e->max_dim;
        r.m = e->m; r.n = e->n; r.k = e->k;
        r.opt = e->opt;
        r.exempt_limit = 1;
        r.shape_order = shape_order(sm, e->m, e->n, e->k);
        if (push(&rv, &r)) goto oom;
    }
    /* short-circuit rows and their bare-write reference */
    for (int i = 0; i < mx->nshortcuts; i++) {
        const mgm_shortcut *s = &mx->shortcuts[i];
        int order = shape_order(sm, s->m, s->n, s->k);
        for (int p = 0; p < mx->nprec; p++) {
            memset(&r, 0, sizeof r);
            r.kind = MGM_KERNEL;
            r.kernel = s->kernel;
            r.prec = mx->precs[p];
            r.max_dim = 1;
            r.shortcut = 1;
            r.m = s->m; r.n = s->n; r.k = s->k;
            r.shape_order = order;
            if (push(&rv, &r)) goto oom;
        }
        memset(&r, 0, sizeof r);
        r.kind = MGM_BARE_WRITE;
        r.kernel = -1;
        r.prec = MGM_FP32;
        r.max_dim = 1;
        r.shortcut = 1;
        r.m = s->m; r.n = s->n; r.k = s->k;
        r.shape_order = order;
        if (push(&rv, &r)) goto oom;
    }
    /* --only-kernel: keep that kernel's rows and the references (kernel 0 is re-added below) */
    if (only_kernel >= 0) {
        int w = 0;
        for (int i = 0; i < rv.n; i++)
            if (rv.v[i].kind != MGM_KERNEL || rv.v[i].kernel == only_kernel) rv.v[w++] = rv.v[i];
        rv.n = w;
    }
    /* kernel 0 (shortcut off) in every (shape, precision, max_dim) group: the x_kernel0 baseline. Sorted, a
     * group's rows are adjacent; one baseline per group is pushed, and the dedup below drops it where the
     * group already had one. O(n log n): the fuzzer can make n large. */
    if (rv.n > 1) qsort(rv.v, (size_t)rv.n, sizeof *rv.v, row_cmp);
    int nbefore = rv.n;
    for (int i = 0; i < nbefore; i++) {
        const mgm_row *a = &rv.v[i];
        if (a->kind != MGM_KERNEL) continue;
        if (i > 0) {
            const mgm_row *p = &rv.v[i - 1];
            if (p->kind == MGM_KERNEL && p->shape_order == a->shape_order && p->prec == a->prec &&
                p->max_dim == a->max_dim)
                continue;   /* same group as the previous row: its baseline is already pushed */
        }
        mgm_row b = *a;
        b.kernel = 0;
        b.shortcut = 0;
        memset(&b.opt, 0, sizeof b.opt);   /* the baseline runs with the command line's options */
        b.exempt_limit = 1;
        b.skip[0] = '\0';
        if (push(&rv, &b)) goto oom;
    }
    for (int i = 0; i < rv.n; i++) static_skip(mx, known, nknown, &rv.v[i]);
    if (rv.n > 1) qsort(rv.v, (size_t)rv.n, sizeof *rv.v, row_cmp);
    /* dedup (sorted: equal rows are adjacent, the runnable one first); of a kernel's option variants that are all
     * skipped for the same static reason (a precision it does not claim, a limit), the first stands for the rest */
    int w = 0;
    for (int i = 0; i < rv.n; i++) {
        if (w > 0 && same_row(&rv.v[w - 1], &rv.v[i])) continue;
        if (w > 0 && rv.v[i].skip[0] && rv.v[i].opt.set && strcmp(rv.v[w - 1].skip, rv.v[i].skip) == 0 &&
            rv.v[w - 1].kernel == rv.v[i].kernel && rv.v[w - 1].shape_order == rv.v[i].shape_order &&
            rv.v[w - 1].prec == rv.v[i].prec && rv.v[w - 1].max_dim == rv.v[i].max_dim &&
            rv.v[w - 1].shortcut == rv.v[i].shortcut)
            continue;
        rv.v[w++] = rv.v[i];
    }
    rv.n = w;
    free(sm);
    *rows = rv.v;
    return rv.n;
oom:
    free(sm);
    free(rv.v);
    if (err && errlen)
        snprintf(err, errlen, "the matrix expands to too many rows (more than %d) or memory ran out", MGM_MAX_EXPANDED);
    return -1;
}
