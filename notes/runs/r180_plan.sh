# run 180 (session 39): main's final library checked whole after TR (kernel 10's max_dim 0 epilogue) and mg_fill_s8.
# On an H200 first run 179's questions (probe_start's span of the bare rings; A / NW over the bar rows, three passes;
# ncu's SM clock of A and NW at bf16 M = 8: is the H200's ~2 us the tensor clock?), then main's benchmark into
# bench_nvidia_h200.csv (the h200.csv candidate: TR's rows). On any GPU: every GPU suite (plan_check's order),
# check_model --quick, racecheck / synccheck on the slots test, tools/sanitize.sh over kernel 10 (memcheck, racecheck,
# synccheck), then (not on an H200, whose benchmark ran first) main's benchmark into bench_GPU.csv. ~500 s.
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r180_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run180.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r180
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
    plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
fi
for s in $PLAN_FIRST_SUITES; do plan_suite test_maxgemm "$s/*" ${s}_A 90 --verbose; done
plan_python libmaxgemm.so check_model 120 --quick
for s in $(plan_other_suites test_maxgemm); do plan_suite test_maxgemm "$s/*" ${s}_A 240 --verbose; done
plan_sanitize test_maxgemm 'gpu_kernels/swapab_md0_slots' A 40 synccheck racecheck
TOOLS="memcheck racecheck synccheck" KERNELS="10" JOBS=8 TIMEOUT=120 LOGDIR=$O/sanitize-logs \
    timeout 150 bash tools/sanitize.sh bundle/bin > $O/sanitize_k10.txt 2>&1
plan_step "sanitize.sh kernel 10 rc $?"
[ "$PLAN_GPU" = nvidia_h200 ] || plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
