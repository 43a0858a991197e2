#!/usr/bin/env bash
# tools/timeline.sh [TUNE_DIR]: kernel 4's per-CTA timeline at the headline, from the k4_timeline tune variant
# (built with -DMG_WS_DIAG_TIMELINE=1: every CTA prints its start, its tile ends (%globaltimer ns) and the SM
# cycles (clock64) of its first two tiles). Per run it summarises the LAST launch (the last grid's lines): the
# spread of the CTA starts, the first tile's and the second tile's duration (us) and cycles, and from those the SM
# clock each tile ran at (cycles / ns): a first tile that is slower in ns but not in cycles ran at a lower clock; one
# slower in cycles waited on something (cold caches). Device printf: the CLI's own times are not meaningful.
#   PRECS="bf16 tf32"   FLUSH="flush noflush" (noflush: --no-flush, the operands stay in L2 between launches)
set -u
D=${1:-bundle/tune}
bin=$D/k4_timeline/maxgemm
[ -x "$bin" ] || { echo "timeline.sh: $bin missing (tools/tune.sh k4_timeline)" >&2; exit 2; }
for prec in ${PRECS:-bf16 tf32}; do
    for fl in ${FLUSH:-flush noflush}; do
        extra=
        [ "$fl" = noflush ] && extra=--no-flush
        out=$(timeout -k 5 120 "$bin" run --kernel 4 --precision "$prec" --max-dim 1 --m 1024 --n 8192 --k 8192 \
            --no-shortcut --no-baseline --iters 3 --warmup 1 $extra 2>&1)
        g=$(printf '%s\n' "$out" | grep -c '^TL cta')
        printf '%s\n' "$out" | grep '^TL cta' | awk -v tag="$prec $fl" '
            { n++; cta[n] = $3; st[n] = $7; e1[n] = $9; e2[n] = $11; c1[n] = $19; c2[n] = $20 }
            END {
                # the last launch: the last block of lines with distinct CTA ids (grid size = max id + 1)
                G = 0; for (i = 1; i <= n; i++) if (cta[i] + 1 > G) G = cta[i] + 1
                lo = n - G + 1; if (lo < 1) lo = 1
                smin = 1e30; smax = 0
                for (i = lo; i <= n; i++) { if (st[i] < smin) smin = st[i]; if (st[i] > smax) smax = st[i] }
                k = 0; d1 = d2 = cy1 = cy2 = 0; k2 = 0; endmax = 0
                for (i = lo; i <= n; i++) {
                    k++; d1 += e1[i] - st[i]; cy1 += c1[i]
                    if (e2[i] > 0) { k2++; d2 += e2[i] - e1[i]; cy2 += c2[i] }
                    e = e2[i] > 0 ? e2[i] : e1[i]; if (e - smin > endmax) endmax = e - smin
                }
                printf "%-13s CTAs %d, starts within %.0f ns; tile 1: %.2f us, %.0f cycles, %.3f GHz; ", tag, k, smax - smin, d1 / k / 1e3, cy1 / k, cy1 / d1
                if (k2) printf "tile 2: %.2f us, %.0f cycles, %.3f GHz; ", d2 / k2 / 1e3, cy2 / k2, cy2 / d2
                printf "last CTA ends %.2f us after the first start\n", endmax / 1e3
            }'
        [ "$g" -gt 0 ] || { echo "$prec $fl: no TL lines; output tail:"; printf '%s\n' "$out" | tail -n 5; }
    done
done
