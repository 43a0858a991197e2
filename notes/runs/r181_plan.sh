# run 181 (session 39; ~250 s of command, on an H200 only: any other GPU runs nothing): the H200's questions left by
# runs 174-180, the same steps as run 180's H200 block without the suites (run 180 ran them on main's final library):
# probe_start's span of the bare rings (tma3d_p0, bulk384); A / NW over the bar rows, two passes; ncu's SM clock and
# duration of A and NW at bf16 M = 8 (is the H200's ~2 us at M = 8 the tensor clock of runs 176h-178?); main's
# benchmark into bench_nvidia_h200.csv (the h200.csv candidate, with kernel 10's TR).
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r181_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run181.sh $OUT [span]   (carry ["bundle"], timeout 360)
. bundle/plan_lib.sh; plan_init "$1" r181
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    # session 40: on the first other GPU of a session (second argument "span") the one check main still owes a GPU:
    # probe_start's span mode since a1251b1 (one launch() for the timed and the stamped launches), ~20 s
    if [ "${2:-}" = span ]; then plan_span tma3d_p0 bulk384; fi
    plan_step "not an H200 ($PLAN_GPU): nothing else run"
    exit 0
fi
plan_span tma3d_p0 bulk384
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
