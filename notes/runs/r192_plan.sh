# run 192 (session 43; ~250 s of command on an H100, ~550 s on an H200): the poller's sleep. kernel 8's grid_poll
# sleeps 1 us between reads while more than half the grid's slots are missing; tma3d_finp (the least grid finish,
# tail 1.0 us after the ring) sleeps 256 ns there and tma3d_fin8 (kernel 8's finish code, tail 1.8) keeps 1 us. If
# the grid's last half of slots lands within ~0.6 us (run 145's timelines), a poller that went to sleep just before
# the crossing finds them only when it wakes, up to ~1 us later, and run 187's pipelined end (PP) never runs: that
# would explain why PP was level in kernel 8 and in fin8 (run 189) while finp gains. S: the sleep 256 ns
# (notes/runs/r192_exp_s.diff); SP: the sleep 256 ns and PP (notes/runs/r192_exp_sp.diff). On the bare ring
# (probe_S / probe_SP: tma3d_fin8 with each) beside finp and main's fin8, their checks, A / S / SP over the bar rows
# and each one's GPU validation (racecheck / synccheck on the slots test, determinism, kernel 8's suites, the generic
# suites, the k-loops' SASS). On an H200 first main's benchmark into bench_nvidia_h200.csv (the h200.csv candidate:
# TR and W8) and the finish's floor there.
# BIN probe_S probe_start notes/runs/r192_exp_s.diff
# BIN probe_SP probe_start notes/runs/r192_exp_sp.diff
# BIN maxgemm_S maxgemm notes/runs/r192_exp_s.diff
# BIN maxgemm_SP maxgemm notes/runs/r192_exp_sp.diff
# BIN bench_S maxgemm_bench notes/runs/r192_exp_s.diff
# BIN bench_SP maxgemm_bench notes/runs/r192_exp_sp.diff
# BIN test_S test_maxgemm notes/runs/r192_exp_s.diff
# BIN test_SP test_maxgemm notes/runs/r192_exp_sp.diff
#   tools/pack_bundle.sh notes/runs/r192_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run192.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r192
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
    plan_span tma3d_p0 tma3d_finp tma3d_fin8 tma3d_p0
fi
plan_span tma3d_finp tma3d_fin8
PROBE=bundle/bin/probe_S plan_span tma3d_fin8
PROBE=bundle/bin/probe_SP plan_span tma3d_fin8
plan_span tma3d_fin8 tma3d_finp
PROBE=bundle/bin/probe_SP plan_span tma3d_fin8
PROBE=bundle/bin/probe_S plan_span tma3d_fin8
plan_span tma3d_fin8
for v in S SP; do
    plan_checks maxgemm_$v "1 8192 8192;8 8192 8192;64 8192 8192;3 1000 1000;5 777 129;33 8192 999;17 100 64" \
        --kernel 8 -p bf16
    plan_checks maxgemm_$v "8 8192 8192;13 1000 130" --kernel 8 -p tf32
done
plan_abx bar bench/matrix_bar.txt A_1 S_1 SP_1 SP_2 S_2 A_2 A_3 SP_3 S_3
cuobjdump -sass bundle/bin/maxgemm_bench > /tmp/a.sass 2>/dev/null
for v in S SP; do
    plan_sanitize test_$v 'gpu_kernels/swapab_md0_slots' $v 40 racecheck synccheck
    plan_suite test_$v 'gpu_determinism/*' determinism_$v 60 --verbose
    plan_suite test_$v 'gpu_kernels/swapab*' swapab_$v 120 --verbose
    plan_suite test_$v 'gpu_kernels/planted_nonfinite' planted_$v 60 --verbose
    plan_suite test_$v 'gpu_kernels/partial_maxima' partial_$v 60 --verbose
    plan_suite test_$v 'gpu_kernels/random_inputs' random_$v 60 --verbose
    cuobjdump -sass bundle/bin/bench_$v > /tmp/b.sass 2>/dev/null
    python3 tools/sass_kloop_diff.py /tmp/a.sass /tmp/b.sass > "$O/kloop_diff_$v.txt" 2>&1
    plan_step "k-loop SASS A / $v: rc $? ($(grep -c '^same' "$O/kloop_diff_$v.txt") same of $(grep -c . "$O/kloop_diff_$v.txt") lines)"
done
plan_step "done"
