# plots/plotdata.awk: the derived tables the plots need from the benchmark CSV alone (bench/bench.c writes it; columns
# are found by NAME, and the columns newer CSVs add -- p10_ms, p90_ms, kernel0_ms, requested_kernel -- are optional,
# so the same scripts read bench/results/h200.csv (the older layout) and new CSVs). POSIX awk (mawk and gawk).
#
#   awk -F, -f plots/plotdata.awk -v mode=MODE [-v prec=P] CSV
#
# mode=src      "auto" when the CSV has auto rows (requested_kernel = auto, full compute, N = K = 8192), else "best"
# mode=msweep   prec=P: one line per M at N = K = 8192 (full compute, status ok), sorted by M:
#                 M  x1 k1 pct1 k0pct1  x0 k0 pct0 k0pct0
#               x = x_kernel0 of the auto row (or, in a CSV without auto rows, of the kernel with the highest
#               x_kernel0 other than kernel 0), k = the kernel that ran, pct = 100 * floor / median_ms of that row,
#               k0pct = the same for kernel 0 (its median over the samples interleaved with that row, x_kernel0 *
#               median_ms, so pct / k0pct = x; its own row where the ratio is missing); suffix 1 = max_dim 1,
#               0 = max_dim 0; NaN where absent.
#               floor (ms) = max(bytes / copy rate, flop / roof): bytes = (M K + N K + N + out) * element size
#               (out = M for max_dim 1, N for max_dim 0; 2 B bf16, 4 B tf32 / fp32), the copy rate = ceiling_copy's
#               gbps (bytes read + written per second), roof = ceiling_bf16 / ceiling_tf32 tflops for bf16 / tf32,
#               and for fp32 3 x 2MNK at ceiling_bf16 (the fp32-accurate kernels 5 and 6 run three bf16 GEMMs).
# mode=roofs    copy_gbps bf16_tflops tf32_tflops fp32_tflops int8_tops (the ceiling rows; NaN where absent)
# mode=ladder   headline M=1024 N=K=8192, full compute, explicit kernels (not auto), in CSV order:
#                 label x1 lo1 hi1 x0 lo0 hi0
#               lo / hi: kernel 0's paired median over the row's p90 / p10 (or max / min in CSVs without p10_ms)
# mode=spread   "p10/p90" or "min/max": which sample spread mode=ladder draws
# mode=roofpts  headline points, max_dim 1, full compute, explicit kernels: px py lx ly label
#               split-precision kernels (5, 6: fp32 on bf16 tensor cores; 9, 10: on s8 ones) at 3 x intensity and
#               3 x TFLOP/s (the bf16 or int8 work they execute); labels stacked in one column (lx = xlab, default 1900) and spread apart
#               vertically (ly >= previous * 10^(gap / 1000) in log space, gap default 65), px py = the point.
function get(name) { return (name in col) ? $(col[name]) : "" }
function num(v) { return v == "" ? "NaN" : v }
function isnum(v) { return v != "" && v != "NaN" && v != "nan" && v != "-nan" }
function is_auto() { return get("requested_kernel") == "auto" }
function fmt(v) { return (v == "NaN") ? "NaN" : sprintf("%.6g", v) }
BEGIN { nm = 0; nl = 0; np = 0; has_auto = 0; if (xlab == "") xlab = 1900; if (gap == "") gap = 65 }
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    name = get("name"); st = get("status")
    if (st != "ok") next
    if (name == "ceiling_copy") { copy = get("gbps"); next }
    if (name == "ceiling_bf16") { cbf = get("tflops"); next }
    if (name == "ceiling_tf32") { ctf = get("tflops"); next }
    if (name == "ceiling_fp32") { cfp = get("tflops"); next }
    if (name == "ceiling_int8") { ci8 = get("tflops"); next }
    if (get("kernel") == "-1" || get("shortcut") != "0") next
    k = get("kernel") + 0; p = get("precision"); md = get("max_dim"); m = get("m") + 0
    n = get("n") + 0; kk = get("k") + 0
    if (n == 8192 && kk == 8192) {
        if (is_auto()) has_auto = 1
        if (p == prec) {
            if (!(m in seen_m)) { seen_m[m] = 1; ms[++nm] = m }
            key = m SUBSEP md
            x = get("x_kernel0")
            if (is_auto()) {
                if (!(key in ax)) { ax[key] = x; ak[key] = k; amed[key] = get("median_ms") }
            } else if (k == 0) {
                if (!(key in k0med)) k0med[key] = get("median_ms")
            } else if (isnum(x) && (!(key in bx) || x + 0 > bx[key] + 0)) {
                bx[key] = x; bk[key] = k; bmed[key] = get("median_ms")
            }
        }
    }
    if (m == 1024 && n == 8192 && kk == 8192 && !is_auto()) {
        med = get("median_ms")
        x = get("x_kernel0")
        if (isnum(x) && isnum(med)) {
            k0 = x * med
            lo_s = get("p90_ms"); hi_s = get("p10_ms")
            if (isnum(lo_s) && isnum(hi_s)) spread = "p10/p90"
            else { lo_s = get("max_ms"); hi_s = get("min_ms"); if (spread == "") spread = "min/max" }
            lbl = sprintf("\"k%d %s %s\"", k, name, p)
            if (!(lbl in seen_l)) { seen_l[lbl] = 1; ls[++nl] = lbl }
            lx_[lbl SUBSEP md] = x
            llo[lbl SUBSEP md] = isnum(lo_s) ? k0 / lo_s : "NaN"
            lhi[lbl SUBSEP md] = isnum(hi_s) ? k0 / hi_s : "NaN"
        }
        if (md == "1" && isnum(get("intensity")) && isnum(get("tflops"))) {
            # fp32 split precision runs three products of its problem's size: kernels 5, 6 on bf16 tensor cores,
            # kernels 9, 10 on s8 ones (hh, hl, lh; kernel 9's cross term is one GEMM over 2K)
            sfx = p == "fp32" ? ((k == 5 || k == 6) ? " (x3 bf16)" : (k == 9 || k == 10) ? " (x3 int8)" : "") : ""
            f = sfx != "" ? 3 : 1
            pxs[++np] = get("intensity") * f; pys[np] = get("tflops") * f
            plb[np] = sprintf("k%d %s %s%s", k, name, p, sfx)
        }
    }
}
function floor_ms(m, md, p,   es, out, bytes, tm, tc, flop) {
    es = (p == "bf16") ? 2 : 4
    out = (md == "1") ? m : 8192
    bytes = (m * 8192.0 + 8192.0 * 8192.0 + 8192.0 + out) * es
    flop = 2.0 * m * 8192.0 * 8192.0
    tm = isnum(copy) ? bytes / (copy * 1e9) * 1e3 : "NaN"
    if (p == "bf16") tc = isnum(cbf) ? flop / (cbf * 1e12) * 1e3 : "NaN"
    else if (p == "tf32") tc = isnum(ctf) ? flop / (ctf * 1e12) * 1e3 : "NaN"
    else tc = isnum(cbf) ? 3.0 * flop / (cbf * 1e12) * 1e3 : "NaN"
    if (tm == "NaN" || tc == "NaN") return "NaN"
    return tm > tc ? tm : tc
}
function pct(fl, med) { return (fl == "NaN" || !isnum(med) || med + 0 <= 0) ? "NaN" : 100.0 * fl / med }
function one(m, md,   key, x, kid, med, fl) {
    key = m SUBSEP md
    if (has_auto) { x = (key in ax) ? ax[key] : "NaN"; kid = (key in ak) ? ak[key] : "NaN"; med = (key in amed) ? amed[key] : "" }
    else { x = (key in bx) ? bx[key] : "NaN"; kid = (key in bk) ? bk[key] : "NaN"; med = (key in bmed) ? bmed[key] : "" }
    fl = floor_ms(m, md, prec)
    # kernel 0: its median over the samples interleaved with this row (x_kernel0 * median_ms, = kernel0_ms), so
    # pct / k0pct = x_kernel0; its own row (timed alone) where the row has no ratio
    k0 = (isnum(x) && isnum(med)) ? x * med : ((key in k0med) ? k0med[key] : "")
    return num(x) " " kid " " fmt(pct(fl, med)) " " fmt(pct(fl, k0))
}
END {
    if (mode == "src") { print has_auto ? "auto" : "best"; exit 0 }
    if (mode == "roofs") { print num(copy), num(cbf), num(ctf), num(cfp), num(ci8); exit 0 }
    if (mode == "spread") { print (spread == "" ? "min/max" : spread); exit 0 }
    if (mode == "msweep") {
        for (i = 2; i <= nm; i++) { v = ms[i]; for (j = i - 1; j >= 1 && ms[j] > v; j--) ms[j + 1] = ms[j]; ms[j + 1] = v }
        for (i = 1; i <= nm; i++) print ms[i], one(ms[i], "1"), one(ms[i], "0")
        exit 0
    }
    if (mode == "ladder") {
        for (i = 1; i <= nl; i++) {
            l = ls[i]; line = l
            for (d = 1; d >= 0; d--) {
                key = l SUBSEP d
                line = line " " ((key in lx_) ? lx_[key] " " fmt(llo[key]) " " fmt(lhi[key]) : "NaN NaN NaN")
            }
            print line
        }
        exit 0
    }
    if (mode == "roofpts") {
        # sort by y, then spread the label heights apart in log space: a pass up, then a pass down from the top
        for (i = 1; i <= np; i++) ord[i] = i
        for (i = 2; i <= np; i++) { v = ord[i]; for (j = i - 1; j >= 1 && pys[ord[j]] > pys[v]; j--) ord[j + 1] = ord[j]; ord[j + 1] = v }
        g = gap / 1000.0
        for (i = 1; i <= np; i++) {
            ly[i] = log(pys[ord[i]]) / log(10)
            if (i > 1 && ly[i] < ly[i - 1] + g) ly[i] = ly[i - 1] + g
        }
        if (ymax != "" && np > 0 && ly[np] > log(ymax) / log(10)) ly[np] = log(ymax) / log(10)
        for (i = np - 1; i >= 1; i--) if (ly[i] > ly[i + 1] - g) ly[i] = ly[i + 1] - g
        for (i = 1; i <= np; i++) {
            o = ord[i]
            printf "%.6g %.6g %.6g %.6g \"%s\"\n", pxs[o], pys[o], xlab, exp(ly[i] * log(10)), plb[o]
        }
        exit 0
    }
    print "plotdata.awk: unknown mode '" mode "' (src, msweep, roofs, ladder, spread, roofpts)" > "/dev/stderr"
    exit 2
}
