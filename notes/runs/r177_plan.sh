# run 177 (session 39; ~300 s of command on any GPU): FM, kernel 8's bf16 n8 row (M <= 8) multiplying on the CUDA
# cores (notes/runs/r177_exp_fma.diff): no tensor instruction in that kernel, so its SMs keep 1.98 GHz where any
# tensor instruction holds them at ~1.80 on an H100 (notes/runs/r176h_ncu_clock.txt), which cost the W stream 0.6-0.7 us
# at M = 8 (NW, runs 174-175). Each consumer thread: 4 W rows x 8 x rows over a 16-k slice per stage (512 FMA), the
# slices summed by shuffles at the end into the wgmma accumulator layout, then the same epilogue and finish.
# Prediction: FM at NW's time (H100: 0.6-0.7 us under A at M = 8; M = 1-8 both max_dims), if 128 threads keep up with
# the stream (~650 instructions per thread per stage, IPC ~0.5 per SMSP at H100 rates, ~0.7 at the H200's).
# (1) FM's correctness first: maxgemm_FM --check at odd shapes (K tails, N not a multiple of 64, K = 0) both max_dims;
# then its gpu_kernels and gpu_determinism suites; (2) A / FM / NW over bench/matrix_k8_stream.txt and
# bench/matrix_bar.txt, three passes; (3) ncu SM clock of FM.
# BIN maxgemm_FM maxgemm notes/runs/r177_exp_fma.diff
# BIN bench_FM maxgemm_bench notes/runs/r177_exp_fma.diff
# BIN test_FM test_maxgemm notes/runs/r177_exp_fma.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r177_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run177.sh $OUT        (carry ["bundle"], timeout 480)
. bundle/plan_lib.sh; plan_init "$1" r177
for s in "1 8192 8192" "8 8192 8192" "3 1000 1000" "7 777 129" "5 8192 999" "8 100 64" "2 64 0" "8 8192 130"; do
    set -- $s
    for d in 1 0; do
        plan_cli "check_m$1_n$2_k$3_d$d" maxgemm_FM 30 --kernel 8 -p bf16 -m $1 -n $2 -k $3 -d $d --no-shortcut \
            --check -i 3 -w 1
        echo "m$1_n$2_k$3_d$d $(grep -o 'PASS\|FAIL' "$O/check_m$1_n$2_k$3_d$d.txt" | head -1)" >> "$O/checks.txt"
    done
done
plan_step "checks: $(grep -c PASS "$O/checks.txt") PASS, $(grep -c FAIL "$O/checks.txt") FAIL"
plan_abx abl bench/matrix_k8_stream.txt A_1 FM_1 NW_1 NW_2 FM_2 A_2 FM_3 A_3 NW_3
plan_abx bar bench/matrix_bar.txt A_1 FM_1 FM_2 A_2
N=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 60 $N --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    -k regex:swapab --launch-skip 2 --launch-count 4 bundle/bin/bench_FM --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv > "$O/ncu_FM.csv" 2>&1
plan_step "ncu FM rc $?"
plan_suite test_FM 'gpu_kernels/*' gpu_kernels_FM 200 --verbose
plan_suite test_FM 'gpu_determinism/*' gpu_determinism_FM 90 --verbose
