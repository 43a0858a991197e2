# run 195 (session 44; ~420 s of command on an H200, ~200 s elsewhere): run 194's steps on an H200 (main's benchmark
# into bench_nvidia_h200.csv, the bar rows, the finish's floor) plus what sizes the W stream's gap there: TL3 (the
# light timeline, run 147's diagnostic rebased to HEAD as r195_exp_tl3.diff) at bf16 M = 8, 32, 64, both max_dims
# (do M = 32-64's early-finishing CTA pairs of run 153 survive PN?), and run 179's NW A / B and ncu clock (is the
# H200's M = 8 gap to the bare ring the tensor clock?). On any other GPU: main's benchmark into bench_$PLAN_GPU.csv
# (the h100.csv candidate: run 180 predates W8 and R) and the bar rows, so that a start that lands on an H100 is used.
# BIN tl3 maxgemm notes/runs/r195_exp_tl3.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r195_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run195.sh $OUT        (carry ["bundle"], timeout 480)
. bundle/plan_lib.sh; plan_init "$1" r195
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 170
    plan_abx bar bench/matrix_bar.txt A_1 A_2
    plan_step "not an H200 ($PLAN_GPU): the H200 steps not run"
    exit 0
fi
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_span tma3d_p0 tma3d_finp tma3d_fin8 tma3d_p0
plan_tl3 tl3 "8 32 64" "1 0"
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_step "done"
