# run 178 (session 39; ~150 s of command on any GPU): FM4, run 177's CUDA-core consumer for kernel 8's bf16 n8 row
# multiplying only the x rows < M (1, 2, 4 or 8 of the tile: notes/runs/r178_exp_fma4.diff). Run 177 (H100): FM kept
# the SMs at 1.985 GHz and passed every check (16/16 odd shapes, gpu_kernels 51/51, gpu_determinism 24/24) but took
# 52.4-54.2 us at M <= 8 against main's 47.9: 512 FMA per thread per stage for all 8 x rows whatever M is, which 128
# threads do not finish in a stage's time. At M = 1 / 2 / 4 FM4 does 64 / 128 / 256. Prediction: FM4 at NW's time at
# M = 1-2 (0.4-0.7 us under main on an H100), level or slower at M = 4, FM's at 5-8; M > 8 unchanged (wgmma rows).
# (1) FM4's --check at M = 1-5 on odd shapes, both max_dims, and gpu_determinism; (2) A / FM4 / NW over
# bench/matrix_bar.txt, two passes; (3) ncu SM clock and duration at M = 2 (main, FM4); (4) on an H200 also
# probe_start's span of the bare rings (run 176's question).
# BIN maxgemm_FM4 maxgemm notes/runs/r178_exp_fma4.diff
# BIN bench_FM4 maxgemm_bench notes/runs/r178_exp_fma4.diff
# BIN test_FM4 test_maxgemm notes/runs/r178_exp_fma4.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r178_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run178.sh $OUT        (carry ["bundle"], timeout 360)
. bundle/plan_lib.sh; plan_init "$1" r178
for s in "1 8192 8192" "2 8192 8192" "4 8192 8192" "3 1000 1000" "1 777 129" "2 8192 999" "4 100 64" "5 8192 130"; do
    set -- $s
    for d in 1 0; do
        plan_cli "check_m$1_n$2_k$3_d$d" maxgemm_FM4 30 --kernel 8 -p bf16 -m $1 -n $2 -k $3 -d $d --no-shortcut \
            --check -i 3 -w 1
        echo "m$1_n$2_k$3_d$d $(grep -o 'PASS\|FAIL' "$O/check_m$1_n$2_k$3_d$d.txt" | head -1)" >> "$O/checks.txt"
    done
done
plan_step "checks: $(grep -c PASS "$O/checks.txt") PASS, $(grep -c FAIL "$O/checks.txt") FAIL"
plan_suite test_FM4 'gpu_determinism/*' gpu_determinism_FM4 90 --verbose
plan_abx bar bench/matrix_bar.txt A_1 FM4_1 NW_1 NW_2 FM4_2 A_2
N=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for b in maxgemm maxgemm_FM4; do
    timeout 60 $N --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed \
        -k regex:swapab --launch-skip 2 --launch-count 3 bundle/bin/$b run --kernel 8 -p bf16 -m 2 -d 1 --no-shortcut \
        --no-baseline -i 3 -w 2 > "$O/ncu_$b.csv" 2>&1
done
plan_step "ncu main / FM4 at M = 2"
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    for v in tma3d_p0 bulk384; do
        timeout 60 bundle/bin/probe_start $v 128 20 span >> "$O/probe_span.csv" 2>> "$O/probe_span.log"
    done
    plan_step "probe_start span rc $?"
fi
