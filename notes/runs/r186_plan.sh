# run 186 (session 41; ~40 s of command on any GPU, ~320 s on an H200): where max_dim 0's finish floor goes, then run
# 185's H200 steps. probe_start's tma3d_fin now stamps its chain after the last ring's end (the last slot store, the
# first and the last poller to have all 128 slots), and two new forms of its poll: tma3d_finp (two load sets in flight
# half a round trip apart: is the wait for the next round part of the floor?) and tma3d_finb (a 128 ns back-off per
# round: do the 127 pollers on the last slot's line slow its trip?), p0 fin finp finb finb finp fin p0; the pipelined
# poll's SASS (are both load sets in flight before the first is waited on?). On an H200 then run 185's steps: main's
# benchmark into bench_nvidia_h200.csv (the h200.csv candidate with TR), kernel 8's bar rows A / NW, ncu's SM clock.
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r186_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run186.sh $OUT        (carry ["bundle"], timeout 480)
. bundle/plan_lib.sh; plan_init "$1" r186
plan_span tma3d_p0 tma3d_fin tma3d_finp tma3d_finb tma3d_finb tma3d_finp tma3d_fin tma3d_p0
f=$(cuobjdump -sass bundle/bin/probe_start | sed -n 's/.*Function : \(_Z11bulk_kernelILi256ELb0ELi2ELi4EE[^ ]*\).*/\1/p' | head -1)
cuobjdump -sass -fun "$f" bundle/bin/probe_start > "$O/finp_sass.txt" 2>&1
plan_step "finp SASS: $(grep -c 'LDG' "$O/finp_sass.txt") LDG lines ($f)"
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): run 185's steps not run"
    exit 0
fi
plan_span tma3d_p0 tma3d_fin tma3d_finmu tma3d_finmu tma3d_fin tma3d_p0
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_step "done"
