#!/bin/sh
# sass_counts.sh FILE.sass: per kernel function in a `cuobjdump -sass` listing, the number of HGMMA (wgmma),
# HMMA (mma.sync) and FFMA (SIMT fp32 FMA) instructions, and the instruction count; then the totals.
set -eu
f=${1:?usage: tools/sass_counts.sh FILE.sass}
awk '
    /Function :/ { fn = $NF; if (!(fn in seen)) { seen[fn] = 1; order[++n] = fn } next }
    /\/\*[0-9a-f]+\*\// && fn != "" {
        ins[fn]++
        if ($0 ~ /[^A-Z]HGMMA[^A-Z]/) hg[fn]++
        else if ($0 ~ /[^A-Z]HMMA[^A-Z]/) hm[fn]++
        if ($0 ~ /[^A-Z]FFMA[^A-Z0-9]/) ff[fn]++
    }
    END {
        printf "%-8s %-8s %-8s %-8s %s\n", "HGMMA", "HMMA", "FFMA", "instrs", "function"
        for (i = 1; i <= n; i++) {
            f = order[i]
            printf "%-8d %-8d %-8d %-8d %s\n", hg[f], hm[f], ff[f], ins[f], f
            th += hg[f]; tm += hm[f]; tf += ff[f]; ti += ins[f]
        }
        printf "%-8d %-8d %-8d %-8d %s\n", th, tm, tf, ti, "TOTAL"
    }' "$f"
