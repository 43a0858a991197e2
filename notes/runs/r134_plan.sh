# run 134 (session 31): main 3f7d5b6 (K, the H100 table, 2ce2db4's launch-config helper), whichever Hopper the device
# lends, in two calls so each fits the 600 s limit:
#   part 1 (bench): the benchmark with the compiled-in tables (no --dispatch: auto follows this GPU's own table) into
#     bench_<gpu>.csv, then the suites that guard the API, the dispatch table and the short-circuit (~150 s)
#   part 2 (check): check_model --quick, every other gpu_* suite of test_maxgemm's own --list, synccheck / racecheck on
#     the slots test: the first GPU run of 2ce2db4's launch code (~300 s)
#   tools/pack_bundle.sh notes/runs/r134_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run134.sh $OUT bench     (carry ["bundle"], timeout 400)
#   tar xJf bundle/pack.tar.xz && bash bundle/run134.sh $OUT check     (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r134_$2
first=$PLAN_FIRST_SUITES
if [ "$2" = bench ]; then
    timeout 200 bundle/bin/maxgemm_bench --matrix bench/matrix.txt --csv $O/bench_$PLAN_GPU.csv > $O/bench.log 2>&1
    plan_step "bench ($PLAN_GPU, compiled-in tables) rc $? rows $(wc -l < $O/bench_$PLAN_GPU.csv 2>/dev/null)"
    for s in $first; do plan_suite test_maxgemm "$s/*" $s 90 --verbose; done
else
    plan_python libmaxgemm.so check_model 120 --quick
    rest=$(plan_other_suites test_maxgemm)
    # 300 s a suite: gpu_kernels takes ~230 s (run 134 gave it 150 and finished its last three tests in two more calls)
    for s in $rest; do plan_suite test_maxgemm "$s/*" $s 300 --verbose; done
    plan_sanitize test_maxgemm 'gpu_kernels/swapab_md0_slots' slots 40 synccheck racecheck
fi
