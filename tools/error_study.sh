#!/usr/bin/env bash
# tools/error_study.sh [BINDIR] : the accuracy of each precision scheme against the fp64 reference, max_dim 0
# (the output that carries the numbers; max_dim 1 is +0.0 or NaN), headline shape, 5 seeds of seed-like inputs.
# Prints one line per (scheme, seed): max abs error and 99.9th percentile of |out - ref|, and the pass/fail against
# the fp32 bar (atol = rtol = 1e-4) whatever the mode claims, so the schemes can be compared on one scale.
# SCHEMES="KERNEL:PRECISION:NAME ..." replaces the list (a kernel this build lacks prints an ERROR line).
# The numbers come from the row each run appends with --csv (max_err, p999_err; tools/csvsel.awk), not from the
# printed text; CSV=FILE keeps all the rows.
B=${1:-build}
SEL=$(cd "$(dirname "$0")" && pwd)/csvsel.awk
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
schemes=${SCHEMES:-"0:fp32:SGEMM 0:tf32:cuBLAS_TF32 2:tf32:mma_sync_TF32_rna 4:tf32:wgmma_TF32_trunc 5:fp32:cuBLAS_bf16x3 6:fp32:fused_bf16x3 9:fp32:cuBLAS_int8x3 10:fp32:fused_int8x3"}
printf '%-20s %-5s %-12s %-12s %s\n' scheme seed max_abs p999_abs fp32_bar
for s in $schemes; do
  IFS=: read -r kid prec name <<<"$s"
  for seed in 1 2 3 4 5; do
    csv=$TMP/run.csv
    rm -f "$csv"
    "$B/maxgemm" run --kernel "$kid" --precision "$prec" --max-dim 0 --seed "$seed" --check --iters 1 --warmup 0 \
      --no-flush --no-baseline --csv "$csv" >"$TMP/out.txt" 2>&1
    rc=$?
    if [ ! -s "$csv" ]; then
      printf '%-20s %-5s %-12s %-12s %s\n' "$name" "$seed" - - "ERROR rc=$rc: $(tail -n 1 "$TMP/out.txt")"
      continue
    fi
    read -r mx p9 <<<"$(awk -F, -f "$SEL" -v first=1 -v cols=max_err,p999_err "$csv")"
    if [ -n "${CSV:-}" ]; then
      [ -s "$CSV" ] || head -1 "$csv" >"$CSV"
      tail -n +2 "$csv" >>"$CSV"
    fi
    # |ref| <= 1 at max_dim 0 for seed-like inputs, so atol + rtol * |ref| <= 2e-4: above it the bar surely fails.
    bar=$(awk -v m="$mx" 'BEGIN { m += 0; print (m <= 1e-4) ? "passes (max_abs <= atol)" : (m > 2e-4 ? "FAILS (max_abs > 2e-4)" : "needs rel (1e-4 .. 2e-4)") }')
    printf '%-20s %-5s %-12s %-12s %s\n' "$name" "$seed" "$mx" "$p9" "$bar"
  done
done
