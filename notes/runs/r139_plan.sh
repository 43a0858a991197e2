# run 139 (session 31): how much of kernel 8's small-M start is instruction fetch? Every timed sample starts with
# kernel 8's code out of L2 (the flush, or the previous sample's own 134 MB W stream, evicts it; run 135's no-flush
# pass could not tell). WARM (notes/runs/r139_exp_warm_code.diff, the benchmark's code only: the library is main's)
# runs the same kernel-8 configuration once on a tiny problem (same M, precision, max_dim; N = K = 128, splits 1)
# after each flush and before the sample's start event, so the timed launch finds its code warm (L2 and the SM's
# instruction caches) while W stays cold. Prediction: if the ~1 us from CTA start to the first TMA issue is mostly
# code fetch (a few dependent misses to DRAM), WARM is 0.3-1 us faster at bf16 M <= 64 in both max_dims; if it is
# level, the prologue's time is not instruction fetch. A WARM WARM A over bench/matrix_bar.txt (kernel 0's samples
# get the same prewarm launch before them; M = 1024 runs kernel 4 and gets none: a control).
# BIN bench_WARM maxgemm_bench notes/runs/r139_exp_warm_code.diff
#   tools/pack_bundle.sh notes/runs/r139_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run139.sh $OUT        (carry ["bundle"], timeout 300; ~20 s)
. bundle/plan_lib.sh; plan_init "$1" r139
plan_bench ab_A_1 maxgemm_bench bench/matrix_bar.txt 90
plan_bench ab_WARM_1 bench_WARM bench/matrix_bar.txt 90
plan_bench ab_WARM_2 bench_WARM bench/matrix_bar.txt 90
plan_bench ab_A_2 maxgemm_bench bench/matrix_bar.txt 90
