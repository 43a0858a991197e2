#!/usr/bin/env bash
# tools/error_study.sh [BINDIR] : the accuracy of each precision scheme against the fp64 reference, max_dim 0
# (the output that carries the numbers; max_dim 1 is +0.0 or NaN), headline shape, 5 seeds of seed-like inputs.
# Prints one line per (scheme, seed): max abs error and 99.9th percentile of |out - ref|, and the pass/fail against
# the fp32 bar (atol = rtol = 1e-4) whatever the mode claims, so the schemes can be compared on one scale.
B=${1:-build}
schemes="0:fp32:SGEMM 0:tf32:cuBLAS_TF32 2:tf32:mma_sync_TF32_rna 4:tf32:wgmma_TF32_trunc 5:fp32:cuBLAS_bf16x3 6:fp32:fused_bf16x3"
printf '%-20s %-5s %-12s %-12s %s\n' scheme seed max_abs p999_abs fp32_bar
for s in $schemes; do
  IFS=: read -r kid prec name <<<"$s"
  for seed in 1 2 3 4 5; do
    line=$("$B/maxgemm" run --kernel "$kid" --precision "$prec" --max-dim 0 --seed "$seed" --check --iters 1 \
           --warmup 0 --no-flush 2>&1 | grep "check vs")
    mx=$(sed -E 's/.*max abs err ([^,]*),.*/\1/' <<<"$line")
    p9=$(sed -E 's/.*99.9th pct abs err ([^,]*),.*/\1/' <<<"$line")
    # |ref| <= 1 at max_dim 0 for seed-like inputs, so atol + rtol * |ref| <= 2e-4: above it the bar surely fails.
    bar=$(awk -v m="$mx" 'BEGIN { m += 0; print (m <= 1e-4) ? "passes (max_abs <= atol)" : (m > 2e-4 ? "FAILS (max_abs > 2e-4)" : "needs rel (1e-4 .. 2e-4)") }')
    printf '%-20s %-5s %-12s %-12s %s\n' "$name" "$seed" "$mx" "$p9" "$bar"
  done
done
