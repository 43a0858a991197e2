# run 189 (session 42; ~60 s of command on any GPU, ~340 s on an H200): kernel 8's own finish code on the bare ring
# (probe_start's tma3d_fin8: grid_start, grid_poll and grid_finish unchanged after tma3d_p0's ring) beside tma3d_finp
# (the least grid finish, 1.0 us after the ring on H100s, runs 186-188) and tma3d_fin: is the 1.2-1.7 us by which
# kernel 8's max_dim 0 exceeds that floor in its finish code or around it? Then, on an H200, run 185's steps (as run
# 186's plan): the finish's floor there, main's benchmark into bench_nvidia_h200.csv (the h200.csv candidate with
# kernel 10's TR), kernel 8's bar rows A / NW, ncu's SM clock. probe_PP: tma3d_fin8 with run 187's PP (kernel 8's
# poll pipelined as tma3d_finp's), which was level in kernel 8: does it gain on the bare ring, as finp did over finr?
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
# BIN probe_PP probe_start notes/runs/r187_exp_pp.diff
#   tools/pack_bundle.sh notes/runs/r189_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run189.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r189
plan_span tma3d_p0 tma3d_finp tma3d_fin8 tma3d_fin tma3d_fin8 tma3d_finp tma3d_fin8 tma3d_p0
PROBE=bundle/bin/probe_PP plan_span tma3d_fin8
plan_span tma3d_fin8
PROBE=bundle/bin/probe_PP plan_span tma3d_fin8 tma3d_fin8
plan_span tma3d_fin8
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): run 185's steps not run"
    exit 0
fi
plan_span tma3d_p0 tma3d_finp tma3d_fin8 tma3d_fin tma3d_p0
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_step "done"
