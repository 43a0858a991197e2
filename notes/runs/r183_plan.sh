# run 183 (session 40; ~60 s of command on any GPU, ~300 s on an H200): the floor of max_dim 0's grid finish.
# probe_start's tma3d_fin (the bare tma3d_p0 ring plus the least a grid-wide finish can be: own sum -> tagged slot ->
# a poller -> mu -> 64 GELUs per CTA; no epilogue, no tensor instruction) beside tma3d_p0, event-timed and span,
# p0 fin fin p0; then kernel 8's bar rows twice (max_dim 0 - max_dim 1 on the same GPU), so that
# fin - p0 (the chain's floor) sits beside kernel 8's md0 - md1. On an H200 it then runs run 181's H200 steps
# (A / NW over the bar rows, ncu's SM clock of A and NW, main's benchmark into bench_nvidia_h200.csv).
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r183_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run183.sh $OUT        (carry ["bundle"], timeout 420)
. bundle/plan_lib.sh; plan_init "$1" r183
plan_span tma3d_p0 tma3d_fin tma3d_fin tma3d_p0
plan_abx bar bench/matrix_bar.txt A_1 A_2
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): run 181's steps not run"
    exit 0
fi
plan_abx bar bench/matrix_bar.txt NW_1 NW_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
