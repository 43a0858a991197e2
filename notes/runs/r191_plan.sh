# run 191 (session 42; ~150 s of command on any GPU): W8's GPU validation before a merge (run 190: its 18 odd-shape
# checks passed and A / W8 over four passes each put bf16 max_dim 0 M <= 64 at 1.006, 0.2-0.4 us faster at every
# M): racecheck and synccheck on the slots test, gpu_determinism, kernel 8's suites, the generic suites over every
# kernel (planted non-finite values: W8's fp32 GELU falls back to fp64 where c - mu leaves fp32's range), then
# the k-loops' SASS against main's.
# BIN test_W8 test_maxgemm notes/runs/r190_exp_w8.diff
# BIN bench_W8 maxgemm_bench notes/runs/r190_exp_w8.diff
#   tools/pack_bundle.sh notes/runs/r191_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run191.sh $OUT        (carry ["bundle"], timeout 240)
. bundle/plan_lib.sh; plan_init "$1" r191
plan_sanitize test_W8 'gpu_kernels/swapab_md0_slots' W8 40 racecheck synccheck
plan_suite test_W8 'gpu_determinism/*' determinism_W8 60 --verbose
plan_suite test_W8 'gpu_kernels/swapab*' swapab_W8 120 --verbose
plan_suite test_W8 'gpu_kernels/planted_nonfinite' planted_W8 60 --verbose
plan_suite test_W8 'gpu_kernels/partial_maxima' partial_W8 60 --verbose
plan_suite test_W8 'gpu_kernels/random_inputs' random_W8 60 --verbose
cuobjdump -sass bundle/bin/maxgemm_bench > /tmp/a.sass 2>/dev/null
cuobjdump -sass bundle/bin/bench_W8 > /tmp/b.sass 2>/dev/null
python3 tools/sass_kloop_diff.py /tmp/a.sass /tmp/b.sass > "$O/kloop_diff.txt" 2>&1
plan_step "k-loop SASS A / W8: rc $? ($(grep -c '^same' "$O/kloop_diff.txt") same of $(grep -c . "$O/kloop_diff.txt") lines)"
