# run 182 (session 39; ~150 s of command on any GPU): FM5, kernel 8's bf16 n8 row on the CUDA cores when the tile has
# <= 4 x rows, the wgmmas kept for 5-8 (a runtime branch; notes/runs/r182_exp_fm5.diff). Against FM4 (run 178: 1.9 us
# slower than main even at M = 1, DRAM at 79-83% of peak): a conflict-free read (per LDS.128 8 rows of one swizzle
# phase x 4 chunks; x broadcast), the stage released right after its loads, a box past K skipped. Two questions:
# (a) does it keep the stream at NW's time at M = 1-4 (prediction: within 0.2 us of NW, 0.3-0.6 us under main on an
# H100)? (b) is the tensor clock static or dynamic: the kernel still holds wgmma instructions (the 5-8 branch), so ncu's
# SM clock at M = 2 says whether a kernel that holds but does not run them keeps 1.98 GHz.
# (1) maxgemm_FM5 --check at M = 1-5 and 8 (odd N and K, K tails), and with --x-tile 8 at M = 12 / 13 (a 4- or 5-row
# last x tile beside full ones: the zero box the FMA path borrows); gpu_kernels/swapab* and gpu_determinism of test_FM5;
# (2) A / FM5 / NW over bench/matrix_bar.txt, two passes; (3) ncu SM clock of FM5 at M = 2 and 8 and main at M = 2;
# (4) on an H200 also run 181's questions (spans, A / NW, ncu A / NW).
# BIN maxgemm_FM5 maxgemm notes/runs/r182_exp_fm5.diff
# BIN bench_FM5 maxgemm_bench notes/runs/r182_exp_fm5.diff
# BIN test_FM5 test_maxgemm notes/runs/r182_exp_fm5.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r182_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run182.sh $OUT        (carry ["bundle"], timeout 360)
. bundle/plan_lib.sh; plan_init "$1" r182
for s in "1 8192 8192 0" "2 8192 8192 0" "4 8192 8192 0" "3 1000 1000 0" "1 777 129 0" "2 8192 999 0" "4 100 64 0" \
    "5 8192 130 0" "8 8192 8192 0" "12 1000 130 8" "13 8192 130 8"; do
    set -- $s
    xt=""; [ "$4" = 0 ] || xt="--x-tile $4"
    for d in 1 0; do
        plan_cli "check_m$1_n$2_k$3_x$4_d$d" maxgemm_FM5 30 --kernel 8 -p bf16 -m $1 -n $2 -k $3 -d $d $xt \
            --no-shortcut --check -i 3 -w 1
        echo "m$1_n$2_k$3_x$4_d$d $(grep -o 'PASS\|FAIL' "$O/check_m$1_n$2_k$3_x$4_d$d.txt" | head -1)" >> "$O/checks.txt"
    done
done
plan_step "checks: $(grep -c PASS "$O/checks.txt") PASS, $(grep -c FAIL "$O/checks.txt") FAIL"
plan_suite test_FM5 'gpu_kernels/swapab*' swapab_FM5 150 --verbose
plan_suite test_FM5 'gpu_determinism/*' gpu_determinism_FM5 90 --verbose
plan_abx bar bench/matrix_bar.txt A_1 FM5_1 NW_1 NW_2 FM5_2 A_2
N=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for c in "maxgemm_FM5 2" "maxgemm_FM5 8" "maxgemm 2"; do
    set -- $c
    timeout 60 $N --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed \
        -k regex:swapab --launch-skip 2 --launch-count 3 bundle/bin/$1 run --kernel 8 -p bf16 -m $2 -d 1 --no-shortcut \
        --no-baseline -i 3 -w 2 > "$O/ncu_$1_m$2.csv" 2>&1
done
plan_step "ncu FM5 M = 2 / 8, main M = 2"
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    for v in tma3d_p0 bulk384; do
        timeout 60 bundle/bin/probe_start $v 128 20 span >> "$O/probe_span.csv" 2>> "$O/probe_span.log"
    done
    plan_step "probe_start span rc $?"
    for b in maxgemm_bench bench_NW; do
        timeout 90 $N --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed \
            -k regex:swapab --launch-skip 2 --launch-count 4 bundle/bin/$b --matrix bench/matrix_k8_stream.txt \
            --csv /tmp/x.csv > "$O/ncu_$b.csv" 2>&1
    done
    plan_step "ncu A / NW"
fi
