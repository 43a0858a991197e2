# run 190 (session 42; ~60 s of command on any GPU, ~350 s on an H200): tma3d_fin8 (kernel 8's finish code on the
# bare ring, run 189: tail 1.79 us against tma3d_finp's 1.02, PP's poll no help) taken apart on its consumer side:
# tma3d_fin8g (the GELU in fp32), tma3d_fin8w (the in-CTA sum by one warp, no consumers_sum), tma3d_fin8wg (both).
# W8 (notes/runs/r190_exp_w8.diff): kernel 8's grid_finish with fin8wg's two changes where it finishes its own rows
# (gown): the first warp alone sums them (no consumers_sum) and the GELU in fp32 where c - mu fits; its checks and
# A / W8 over the bar rows (predicted: max_dim 0 M <= 64 0.3-0.6 us faster if the probe's gain carries over; F2 and
# Q, which each took one of these pieces, were level). Then, on an H200, run 185's steps (as run 189's plan).
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
# BIN maxgemm_W8 maxgemm notes/runs/r190_exp_w8.diff
# BIN bench_W8 maxgemm_bench notes/runs/r190_exp_w8.diff
#   tools/pack_bundle.sh notes/runs/r190_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run190.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r190
plan_span tma3d_finp tma3d_fin8 tma3d_fin8g tma3d_fin8w tma3d_fin8wg tma3d_p0 \
    tma3d_fin8wg tma3d_fin8w tma3d_fin8g tma3d_fin8 tma3d_finp tma3d_p0
plan_checks maxgemm_W8 "1 8192 8192;8 8192 8192;64 8192 8192;3 1000 1000;5 777 129;33 8192 999;17 100 64" \
    --kernel 8 -p bf16
plan_checks maxgemm_W8 "8 8192 8192;13 1000 130" --kernel 8 -p tf32
plan_abx bar bench/matrix_bar.txt A_1 W8_1 W8_2 A_2
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): run 185's steps not run"
    exit 0
fi
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_step "done"
