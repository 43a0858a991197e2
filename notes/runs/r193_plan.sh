# run 193 (session 43; ~200 s of command on an H100, ~450 s on an H200): R, two signatures the second reading of
# session 42 left for a GPU run (notes/runs/r193_exp_r.diff): the finishes' GELU range rule (|c - mu| < 1e30f, written
# twice) as one named predicate, gelu_f32_fits, and grid_start given the slots (gslot, as grid_poll) instead of all
# of Params. Session 42's attempt changed kernel 8's generated code (the same instruction count, another block layout
# in the finish), so it needs: its checks, A / R over the bar rows, racecheck / synccheck on the slots test,
# determinism, kernel 8's suites, the generic suites (planted non-finite values take the fp64 side of the rule), the
# k-loops' SASS, probe_R's tma3d_fin8 (grid_start without the zeroed Params). On an H200 first main's benchmark
# into bench_nvidia_h200.csv (the h200.csv candidate: TR and W8), the finish's floor there and ncu's SM clock.
# BIN probe_R probe_start notes/runs/r193_exp_r.diff
# BIN maxgemm_R maxgemm notes/runs/r193_exp_r.diff
# BIN bench_R maxgemm_bench notes/runs/r193_exp_r.diff
# BIN test_R test_maxgemm notes/runs/r193_exp_r.diff
#   tools/pack_bundle.sh notes/runs/r193_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run193.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r193
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
    plan_span tma3d_p0 tma3d_finp tma3d_fin8 tma3d_p0 tma3d_finp tma3d_fin8
    plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
fi
plan_span tma3d_fin8
PROBE=bundle/bin/probe_R plan_span tma3d_fin8
plan_checks maxgemm_R "1 8192 8192;8 8192 8192;64 8192 8192;3 1000 1000;5 777 129;33 8192 999;17 100 64" \
    --kernel 8 -p bf16
plan_checks maxgemm_R "8 8192 8192;13 1000 130" --kernel 8 -p tf32
plan_abx bar bench/matrix_bar.txt A_1 R_1 R_2 A_2 A_3 R_3
plan_sanitize test_R 'gpu_kernels/swapab_md0_slots' R 40 racecheck synccheck
plan_suite test_R 'gpu_determinism/*' determinism_R 60 --verbose
plan_suite test_R 'gpu_kernels/swapab*' swapab_R 120 --verbose
plan_suite test_R 'gpu_kernels/planted_nonfinite' planted_R 60 --verbose
plan_suite test_R 'gpu_kernels/partial_maxima' partial_R 60 --verbose
plan_suite test_R 'gpu_kernels/random_inputs' random_R 60 --verbose
cuobjdump -sass bundle/bin/maxgemm_bench > /tmp/a.sass 2>/dev/null
cuobjdump -sass bundle/bin/bench_R > /tmp/b.sass 2>/dev/null
python3 tools/sass_kloop_diff.py /tmp/a.sass /tmp/b.sass > "$O/kloop_diff.txt" 2>&1
plan_step "k-loop SASS A / R: rc $? ($(grep -c '^same' "$O/kloop_diff.txt") same of $(grep -c . "$O/kloop_diff.txt") lines)"
plan_step "done"
