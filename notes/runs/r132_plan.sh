# run 132 (session 30): main after K's merge (kernel 8's grid finish by value) and the H100's tuned dispatch table
# (tile_configs/dispatch/h100_80gb_hbm3.tsv from run 130's tune), whichever Hopper the device lends: the suites that
# read the compiled-in tables (gpu_dispatch, gpu_api), then the benchmark with the compiled-in tables (no --dispatch:
# auto follows this GPU's own table) into bench_<gpu>.csv.
#   tools/pack_bundle.sh notes/runs/r132_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run132.sh $OUT        (carry ["bundle"], timeout 400; ~130 s)
. bundle/plan_lib.sh; plan_init "$1" r132
for s in gpu_dispatch gpu_api; do plan_suite test_maxgemm "$s/*" $s 90 --verbose; done
timeout 200 bundle/bin/maxgemm_bench --matrix bench/matrix.txt --csv $O/bench_$PLAN_GPU.csv > $O/bench.log 2>&1
plan_step "bench ($PLAN_GPU, compiled-in tables) rc $? rows $(wc -l < $O/bench_$PLAN_GPU.csv 2>/dev/null)"
