# run 190 (session 42; ~10 s of command on any GPU, ~300 s on an H200): tma3d_fin8 (kernel 8's finish code on the
# bare ring, run 189: tail 1.79 us against tma3d_finp's 1.02, PP's poll no help) taken apart on its consumer side:
# tma3d_fin8g (the GELU in fp32), tma3d_fin8w (the in-CTA sum by one warp, no consumers_sum), tma3d_fin8wg (both).
# Then, on an H200, run 185's steps (as run 189's plan).
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r190_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run190.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r190
plan_span tma3d_finp tma3d_fin8 tma3d_fin8g tma3d_fin8w tma3d_fin8wg tma3d_p0 \
    tma3d_fin8wg tma3d_fin8w tma3d_fin8g tma3d_fin8 tma3d_finp tma3d_p0
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): run 185's steps not run"
    exit 0
fi
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_step "done"
