# run 179 (session 39; ~150 s of command on any GPU, ~250 s on an H200): (1) TR: kernel 10's max_dim 0 column maxima by
# the transpose-reduce kernels 4 and 8 share (mg_transpose_max_store, kernels/hopper.cuh: NV/2 + NV/4 + NV/8 = 56
# shuffles per thread and tile at bn = 128 where three plain ones per value took 96; notes/runs/r179_exp_tr.diff).
# Prediction: level to +0.3% on kernel 10's max_dim 0 rows (the epilogue is a few % of a tile's time), max_dim 1
# untouched; bits unchanged (a max in any order is the same max). Its --check at odd shapes, gpu_int8x3's
# kernel10_matches_kernel9 (bit for bit against kernel 9) and deterministic, then A / TR over
# bench/matrix_int8_md0.txt, three passes. (2) On an H200 only: run 176's questions (probe_start's span of the bare
# rings; A / NW over the bar rows; ncu SM clock of A and NW: is the H200's ~2 us at bf16 M = 8 the tensor clock?).
# BIN maxgemm_TR maxgemm notes/runs/r179_exp_tr.diff
# BIN bench_TR maxgemm_bench notes/runs/r179_exp_tr.diff
# BIN test_TR test_maxgemm notes/runs/r179_exp_tr.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r179_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run179.sh $OUT        (carry ["bundle"], timeout 480)
. bundle/plan_lib.sh; plan_init "$1" r179
for s in "1024 8192 8192" "300 1000 1000" "77 333 999" "129 64 8"; do
    set -- $s
    for d in 0 1; do
        plan_cli "check_m$1_n$2_k$3_d$d" maxgemm_TR 60 --kernel 10 -p fp32 -m $1 -n $2 -k $3 -d $d --no-shortcut \
            --check -i 3 -w 1
        echo "m$1_n$2_k$3_d$d $(grep -o 'PASS\|FAIL' "$O/check_m$1_n$2_k$3_d$d.txt" | head -1)" >> "$O/checks.txt"
    done
done
plan_step "checks: $(grep -c PASS "$O/checks.txt") PASS, $(grep -c FAIL "$O/checks.txt") FAIL"
plan_suite test_TR 'gpu_int8x3/kernel10_matches_kernel9' int8_match_TR 120 --verbose
plan_suite test_TR 'gpu_int8x3/deterministic' int8_det_TR 120 --verbose
plan_abx i8 bench/matrix_int8_md0.txt A_1 TR_1 TR_2 A_2 A_3 TR_3
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    for v in tma3d_p0 bulk384; do
        timeout 60 bundle/bin/probe_start $v 128 20 span >> "$O/probe_span.csv" 2>> "$O/probe_span.log"
    done
    plan_step "probe_start span rc $?"
    plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2 A_3 NW_3
    N=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for b in maxgemm_bench bench_NW; do
        timeout 90 $N --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed \
            -k regex:swapab --launch-skip 2 --launch-count 4 bundle/bin/$b --matrix bench/matrix_k8_stream.txt \
            --csv /tmp/x.csv > "$O/ncu_$b.csv" 2>&1
    done
    plan_step "ncu A / NW"
fi
