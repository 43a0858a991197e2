# run 185 (session 40; on an H200 only, ~280 s of command; any other GPU runs nothing): run 184's H200 steps ordered
# for a short lease (the session's budget was down to ~500 s when the device turned to H200-only): the finish's floor
# there (probe_start tma3d_p0 / tma3d_fin / tma3d_finmu, p0 fin mu mu fin p0), main's benchmark into
# bench_nvidia_h200.csv (the h200.csv candidate with kernel 10's TR), kernel 8's bar rows A / NW, and last ncu's SM
# clock of A and NW (is the tensor clock what kernel 8's W stream loses on the H200?).
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r185_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run185.sh $OUT        (carry ["bundle"])
. bundle/plan_lib.sh; plan_init "$1" r185
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
plan_span tma3d_p0 tma3d_fin tma3d_finmu tma3d_finmu tma3d_fin tma3d_p0
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
