/* optkeys.c: the launch options as KEY=VALUE text (optkeys.h). Pure C: inputs are (pointer, length) slices that need
 * not be NUL-terminated and may hold any byte; messages quote at most 40 bytes, non-printables as '?'. */
#include "optkeys.h"
#include "textscan.h"

#include <stdio.h>
#include <string.h>

static const struct optkey {
    const char *name;
    int nnamed;                                 /* named values: named[v] is the name of value v */
    const char *named[8];
    int num_max;                                /* > 0: also the integers nnamed .. num_max, written in decimal */
} keys[MG_OPTKEY_COUNT] = {
    [MG_OPTKEY_TILES] = {"tiles", MG_TILES_COUNT, {"auto", "main", "mid", "small", "n192"}, 0},
    [MG_OPTKEY_STREAMK] = {"streamk", MG_SWITCH_COUNT, {"auto", "off", "force"}, 0},
    [MG_OPTKEY_MIXED_PANELS] = {"mixed_panels", MG_SWITCH_COUNT, {"auto", "off", "force"}, 0},
    [MG_OPTKEY_REM_SPLIT] = {"rem_split", MG_SWITCH_COUNT, {"auto", "off", "force"}, 0},
    [MG_OPTKEY_SPLITS] = {"splits", 1, {"auto"}, MG_SPLITS_MAX},
    [MG_OPTKEY_X_TILE] = {"x_tile", 1, {"auto"}, MG_X_TILE_MAX},
    [MG_OPTKEY_CLUSTER] = {"cluster", 1, {"auto"}, 2},
    [MG_OPTKEY_FUSE] = {"fuse", MG_SWITCH_COUNT, {"auto", "off", "force"}, 0},
    [MG_OPTKEY_MCAST] = {"mcast", MG_MCAST_COUNT, {"auto", "w", "x"}, 0},
    [MG_OPTKEY_W_ROWS] = {"w_rows", 1, {"auto"}, 256},
};
_Static_assert(MG_TILES_AUTO == 0 && MG_TILES_MAIN == 1 && MG_TILES_MID == 2 && MG_TILES_SMALL == 3 &&
                   MG_TILES_N192 == 4 && MG_TILES_COUNT == 5,
               "optkeys.c names mg_tiles in its order");
_Static_assert(MG_SWITCH_AUTO == 0 && MG_SWITCH_OFF == 1 && MG_SWITCH_FORCE == 2 && MG_SWITCH_COUNT == 3,
               "optkeys.c names mg_switch in its order");
_Static_assert(MG_MCAST_AUTO == 0 && MG_MCAST_W == 1 && MG_MCAST_X == 2 && MG_MCAST_COUNT == 3,
               "optkeys.c names mg_mcast in its order");
_Static_assert(MG_SPLITS_MAX + 1 <= MG_OPTKEY_MAX_VALUES, "a key's values fit MG_OPTKEY_MAX_VALUES");

const char *mg_optkey_name(int key) { return key >= 0 && key < MG_OPTKEY_COUNT ? keys[key].name : NULL; }

static int same(const char *s, size_t n, const char *word) { return strlen(word) == n && memcmp(s, word, n) == 0; }

int mg_optkey_find(const char *s, size_t n) {
    for (int k = 0; s && k < MG_OPTKEY_COUNT; k++)
        if (same(s, n, keys[k].name)) return k;
    return -1;
}

int mg_optkey_value(int key, const char *s, size_t n) {
    if (key < 0 || key >= MG_OPTKEY_COUNT || !s) return -1;
    for (int v = 0; v < keys[key].nnamed; v++)
        if (same(s, n, keys[key].named[v])) return v;
    if (keys[key].num_max <= 0 || n == 0 || n > 6) return -1;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= keys[key].nnamed && v <= keys[key].num_max ? v : -1;
}

int mg_optkey_format_value(int key, int value, char *buf, size_t len) {
    if (key >= 0 && key < MG_OPTKEY_COUNT && value >= 0 && value < keys[key].nnamed)
        return snprintf(buf, len, "%s", keys[key].named[value]);
    return snprintf(buf, len, "%d", value);
}

int mg_optkey_get(const mg_options *o, int key) {
    switch (key) {
    case MG_OPTKEY_TILES: return (int)o->tiles;
    case MG_OPTKEY_STREAMK: return (int)o->streamk;
    case MG_OPTKEY_MIXED_PANELS: return (int)o->mixed_panels;
    case MG_OPTKEY_REM_SPLIT: return (int)o->rem_split;
    case MG_OPTKEY_SPLITS: return o->splits;
    case MG_OPTKEY_X_TILE: return o->x_tile;
    case MG_OPTKEY_CLUSTER: return o->cluster;
    case MG_OPTKEY_FUSE: return (int)o->fuse;
    case MG_OPTKEY_MCAST: return (int)o->mcast;
    case MG_OPTKEY_W_ROWS: return o->w_rows;
    default: return 0;
    }
}

void mg_optkey_set(mg_options *o, int key, int value) {
    switch (key) {
    case MG_OPTKEY_TILES: o->tiles = (mg_tiles)value; break;
    case MG_OPTKEY_STREAMK: o->streamk = (mg_switch)value; break;
    case MG_OPTKEY_MIXED_PANELS: o->mixed_panels = (mg_switch)value; break;
    case MG_OPTKEY_REM_SPLIT: o->rem_split = (mg_switch)value; break;
    case MG_OPTKEY_SPLITS: o->splits = value; break;
    case MG_OPTKEY_X_TILE: o->x_tile = value; break;
    case MG_OPTKEY_CLUSTER: o->cluster = value; break;
    case MG_OPTKEY_FUSE: o->fuse = (mg_switch)value; break;
    case MG_OPTKEY_MCAST: o->mcast = (mg_mcast)value; break;
    case MG_OPTKEY_W_ROWS: o->w_rows = value; break;
    default: break;
    }
}

void mg_optset_of(const mg_options *o, mg_optset *out) {
    memset(out, 0, sizeof *out);
    for (int k = 0; k < MG_OPTKEY_COUNT; k++)
        if ((out->val[k] = mg_optkey_get(o, k)) != 0) out->set |= 1u << k;
}

void mg_optset_apply(const mg_optset *s, mg_options *o) {
    for (int k = 0; k < MG_OPTKEY_COUNT; k++)
        if (s->set & (1u << k)) mg_optkey_set(o, k, s->val[k]);
}

unsigned mg_optset_fill_auto(const mg_optset *s, mg_options *o) {
    unsigned filled = 0;
    for (int k = 0; k < MG_OPTKEY_COUNT; k++)
        if ((s->set & (1u << k)) && mg_optkey_get(o, k) == 0) {
            mg_optkey_set(o, k, s->val[k]);
            filled |= 1u << k;
        }
    return filled;
}

static int fail(char *err, size_t errlen, const char *what, const char *s, size_t n, const char *why) {
    char b[48];
    if (err && errlen) snprintf(err, errlen, "%s '%s': %s", what, mg_text_show(s, n, b), why);
    return -1;
}

int mg_optset_parse_item(const char *s, size_t n, mg_optset *out, char *err, size_t errlen) {
    const char *eq = s ? memchr(s, '=', n) : NULL;
    if (!eq) return fail(err, errlen, "option", s ? s : "", s ? n : 0, "expected KEY=VALUE");
    const size_t kn = (size_t)(eq - s), vn = n - kn - 1;
    const int key = mg_optkey_find(s, kn);
    if (key < 0) {
        char why[160];
        int w = snprintf(why, sizeof why, "unknown key (");
        for (int k = 0; k < MG_OPTKEY_COUNT && w > 0 && (size_t)w < sizeof why; k++)
            w += snprintf(why + w, sizeof why - (size_t)w, "%s%s", k ? ", " : "", keys[k].name);
        if (w > 0 && (size_t)w < sizeof why) snprintf(why + w, sizeof why - (size_t)w, ")");
        return fail(err, errlen, "option", s, n, why);
    }
    const int v = mg_optkey_value(key, eq + 1, vn);
    if (v < 0) {
        char why[160];
        int w = snprintf(why, sizeof why, "unknown value (%s takes", keys[key].name);
        for (int i = 0; i < keys[key].nnamed && w > 0 && (size_t)w < sizeof why; i++)
            w += snprintf(why + w, sizeof why - (size_t)w, "%s %s", i ? "," : "", keys[key].named[i]);
        if (keys[key].num_max > 0 && w > 0 && (size_t)w < sizeof why)
            w += snprintf(why + w, sizeof why - (size_t)w, " or %d..%d", keys[key].nnamed, keys[key].num_max);
        if (w > 0 && (size_t)w < sizeof why) snprintf(why + w, sizeof why - (size_t)w, ")");
        return fail(err, errlen, "option", s, n, why);
    }
    if (out->set & (1u << key)) return fail(err, errlen, "option", s, n, "key given twice");
    out->set |= 1u << key;
    out->val[key] = v;
    return 0;
}

int mg_optset_parse(const char *s, size_t n, mg_optset *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!s || n == 0) return fail(err, errlen, "options", "", 0, "empty (write auto for none)");
    if (same(s, n, "auto")) return 0;
    size_t i = 0;
    while (i <= n) {
        const char *c = memchr(s + i, ',', n - i);
        const size_t end = c ? (size_t)(c - s) : n;
        if (end == i) return fail(err, errlen, "options", s, n, "an empty item (items are KEY=VALUE joined by ',')");
        if (mg_optset_parse_item(s + i, end - i, out, err, errlen)) return -1;
        i = end + 1;
        if (!c) break;
    }
    return 0;
}

int mg_optset_format(const mg_optset *s, char *buf, size_t len) {
    size_t w = 0;
    if (len) buf[0] = '\0';
    for (int k = 0; k < MG_OPTKEY_COUNT; k++) {
        if (!(s->set & (1u << k))) continue;
        char v[16];
        mg_optkey_format_value(k, s->val[k], v, sizeof v);
        const int r = snprintf(buf + (w < len ? w : len), w < len ? len - w : 0, "%s%s=%s", w ? "," : "",
                               keys[k].name, v);
        if (r < 0) return r;
        w += (size_t)r;
    }
    if (w == 0) return snprintf(buf, len, "auto");
    return (int)w;
}
