# run 184 (session 40; ~40 s of command on any GPU, ~330 s on an H200): where tma3d_fin's ~2 us go (run 183: the
# bare ring plus the least grid finish, +1.9-2.0 us over tma3d_p0 on an H100, event-timed and in span, where kernel
# 8's max_dim 0 costs 2.2-3.0 us over its max_dim 1). probe_start's span now also prints the tail (the last end after
# the last ring's end). Variants, 20 stamped launches each, in the order p0 fin late mu mu late fin p0:
#   tma3d_fin      run 183's: the poller from the CTA's start, the own slot, mu handed over, 64 GELUs stored
#   tma3d_finlate  the poller starts only once its CTA's ring is done (does polling during the stream cost it?)
#   tma3d_finmu    no hand-over and no GELUs: the poller's mu ends the CTA (what do the last steps cost?)
# On an H200 it then runs run 181's H200 steps (kernel 8's bar rows A / NW, ncu's SM clock of A and NW, main's
# benchmark into bench_nvidia_h200.csv).
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r184_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run184.sh $OUT        (carry ["bundle"], timeout 420)
. bundle/plan_lib.sh; plan_init "$1" r184
plan_span tma3d_p0 tma3d_fin tma3d_finlate tma3d_finmu tma3d_finmu tma3d_finlate tma3d_fin tma3d_p0
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): run 181's steps not run"
    exit 0
fi
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
