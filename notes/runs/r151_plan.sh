# run 151 (prepared in session 32 for the next H200): main with the poller (0522e6e) on an H200, in two calls so each
# fits the 600 s limit. Session 32 got only H100s; its merge check (run 147) ran there.
#   part 1 (bench, ~330 s): the benchmark with the compiled-in tables into bench_<gpu>.csv (the successor of
#     bench/results/h200.csv, run 134's, before the poller); run 144's two H200 questions: probe_start's bare read of W
#     beside bench/matrix_bar.txt (is max_dim 1 its bare read + ~0.5 us on an H200, as on the H100 in run 140?), and
#     the bf16 M = 256 row re-measured (bench/matrix_remeasure.txt, three passes: run 134's 1.019 is within noise of
#     1.00); the suites that run kernel 8's finish, and the slots' sanitizers
#   part 2 (check, ~300 s): check_model --quick and every other gpu_* suite (test_maxgemm's own --list)
# On an H100 run neither: run 147 checked this main there.
#   tools/pack_bundle.sh notes/runs/r151_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run151.sh $OUT bench     (carry ["bundle"], timeout 500)
#   tar xJf bundle/pack.tar.xz && bash bundle/run151.sh $OUT check     (carry ["bundle"], timeout 600)
# then here: the sweep summary (README's recipe) of bench_nvidia_h200.csv -> bench/results/h200.csv (run 134's kept as
# h200_r134.csv), `make plots`, the README tables and kernel 8's header figure regenerated; tools/ab_variants.py-style
# pairing for remeasure_*.csv.
. bundle/plan_lib.sh; plan_init "$1" r151_$2
if [ "$2" = bench ]; then
    timeout 200 bundle/bin/maxgemm_bench --matrix bench/matrix.txt --csv $O/bench_$PLAN_GPU.csv > $O/bench.log 2>&1
    plan_step "bench ($PLAN_GPU, compiled-in tables) rc $? rows $(wc -l < $O/bench_$PLAN_GPU.csv 2>/dev/null)"
    timeout 60 bundle/bin/probe_start > $O/probe_start_1.csv 2>&1
    plan_step "probe_start rc $?"
    plan_bench bar_1 maxgemm_bench bench/matrix_bar.txt 60
    for i in 1 2 3; do plan_bench remeasure_$i maxgemm_bench bench/matrix_remeasure.txt 60; done
    plan_sanitize test_maxgemm 'gpu_kernels/swapab_md0_slots' slots 40 synccheck racecheck
    for s in $PLAN_FIRST_SUITES gpu_determinism; do plan_suite test_maxgemm "$s/*" $s 90 --verbose; done
else
    plan_python libmaxgemm.so check_model 120 --quick
    for s in $(plan_other_suites test_maxgemm); do
        [ $s = gpu_determinism ] || plan_suite test_maxgemm "$s/*" $s 300 --verbose
    done
fi
