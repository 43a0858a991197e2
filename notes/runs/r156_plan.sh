# run 156 (session 33, H200 preferred, ~300 s): PN, kernel 8's W tensor map without L2 promotion
# (notes/runs/r156_exp_promo_none.diff: mg_make_tma_3d takes the promotion; kernel 8's w_map passes NONE).
# Floors and prediction: the W stream at bf16 M <= 64 is 134 MB (31.35 us at the copy rate; a bare 1-D bulk read
# 33.3-33.5 us event timed). Run 155: kernel 8's map form read the 128 MiB in 35.6-36.0 us with the 256-byte promotion
# and 33.4 us without it (tma3d256 against tma3d_p0), and its L2 sectors fell from 1.25x to 1.00x the bytes. So
# PN: bf16 M <= 64 1.5-2 us faster (both max_dims: max_dim 1 ~33.8-35.5 us, inside the 36.05 us bar at every M <= 64;
# max_dim 0 ~36.5-37.8); tf32 M <= 64 (268 MB of W) 2-4 us faster; M > 64 smaller gains (x and the tensor work weigh
# more there) or level.
# BIN bench_PN maxgemm_bench notes/runs/r156_exp_promo_none.diff
# BIN test_PN test_maxgemm notes/runs/r156_exp_promo_none.diff
#   tools/pack_bundle.sh notes/runs/r156_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run156.sh $OUT        (carry ["bundle"], timeout 420)
#   then here: tools/ab_variants.py OUT/r156/ab_*.csv; the bar rows (bar_A_*.csv, bar_PN_*.csv)
. bundle/plan_lib.sh; plan_init "$1" r156
plan_ab bench/matrix_poller.txt A_1 PN_1 PN_2 A_2
plan_bench bar_A_1 maxgemm_bench bench/matrix_bar.txt 60
plan_bench bar_PN_1 bench_PN bench/matrix_bar.txt 60
plan_bench bar_PN_2 bench_PN bench/matrix_bar.txt 60
plan_bench bar_A_2 maxgemm_bench bench/matrix_bar.txt 60
for s in gpu_api gpu_dispatch gpu_determinism; do plan_suite test_PN "$s/*" ${s}_PN 60 --verbose; done
plan_suite test_PN 'gpu_kernels/*' gpu_kernels_PN 280 --verbose
