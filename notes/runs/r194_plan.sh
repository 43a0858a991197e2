# run 194 (session 43; ~170 s of command on an H200, ~2 s elsewhere): main (TR, W8, R) on an H200 at last, if one is
# lent: the benchmark into bench_nvidia_h200.csv (the h200.csv candidate), then the bar rows twice and the finish's
# floor there (probe_start's bare ring, finp, fin8). On any other GPU it runs nothing (the H100's questions of this
# session are runs 192-193's).
#   tools/pack_bundle.sh notes/runs/r194_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run194.sh $OUT        (carry ["bundle"], timeout 240)
. bundle/plan_lib.sh; plan_init "$1" r194
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_abx bar bench/matrix_bar.txt A_1 A_2
plan_span tma3d_p0 tma3d_finp tma3d_fin8 tma3d_p0
plan_step "done"
