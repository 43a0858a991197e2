#!/usr/bin/env bash
# tools/ab_main.sh OUTDIR OLD_BENCH NEW_BENCH [ROUNDS]: the performance A/B of a refactor. The whole benchmark matrix
# (bench/matrix.txt) runs with the old build's maxgemm_bench and the new one's, alternating A B B A (ROUNDS pairs,
# default 1), so a clock that drifts during the run favours neither. Every row is checked against the fp64 reference
# before it is timed and carries its own same-process ratio to kernel 0 (x_kernel0), which is what is compared:
#   tools/ab_compare.py OUTDIR/ab_*.csv   -> per row: old and new x_kernel0 (mean of the rounds), new/old - 1.
# Output: OUTDIR/ab_{old,new}_<round><a|b>.csv and ab.log.
set -u
OUT=${1:?usage: tools/ab_main.sh OUTDIR OLD_BENCH NEW_BENCH [ROUNDS]}
OLD=${2:?old maxgemm_bench}
NEW=${3:?new maxgemm_bench}
ROUNDS=${4:-1}
MATRIX=${MATRIX:-bench/matrix.txt}
mkdir -p "$OUT"
for ((r = 1; r <= ROUNDS; r++)); do
    for step in old:a new:a new:b old:b; do
        which=${step%%:*}
        bin=$OLD
        [ "$which" = new ] && bin=$NEW
        csv="$OUT/ab_${which}_${r}${step#*:}.csv"
        echo "[$(date +%T)] round $r $which -> $csv" >>"$OUT/ab.log"
        timeout ${AB_TIMEOUT:-300} "$bin" --matrix "$MATRIX" --csv "$csv" >>"$OUT/ab.log" 2>&1
        echo "exit $?: $(tail -1 "$OUT/ab.log")" >>"$OUT/ab.log"
    done
done
