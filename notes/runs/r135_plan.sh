# run 135 (session 31): what the benchmark's L2 flush costs the timed kernel after it through the SMs' L1 / shared
# carveout. The flush (mg_l2_flush_read) is a read kernel with no shared memory, so the driver runs it in an
# L1-heavy carveout; kernel 8 (and cuBLAS's kernels) then need the shared-heavy one: if that switch costs the next
# launch time, it sits inside every timed sample, and a bare read (no shared memory: no switch) would not show it.
# CO is the flush with cudaFuncAttributePreferredSharedMemoryCarveout = MaxShared (a diagnostic, the benchmark's code
# only: the library is main's). A CO CO A over bench/matrix_bar.txt (bf16 M <= 64 both max_dims, controls), then
# main without the flush, then the W-stream K sweep (fixed cost per launch against the stream rate) A and CO.
# BIN bench_CO maxgemm_bench notes/runs/r135_exp_flush_carveout.diff
#   tools/pack_bundle.sh notes/runs/r135_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run135.sh $OUT        (carry ["bundle"], timeout 400; ~150 s)
. bundle/plan_lib.sh; plan_init "$1" r135
plan_bench ab_A_1 maxgemm_bench bench/matrix_bar.txt 90
plan_bench ab_CO_1 bench_CO bench/matrix_bar.txt 90
plan_bench ab_CO_2 bench_CO bench/matrix_bar.txt 90
plan_bench ab_A_2 maxgemm_bench bench/matrix_bar.txt 90
plan_bench nf_A maxgemm_bench bench/matrix_bar.txt 90 --no-flush
plan_bench ws_A maxgemm_bench bench/matrix_wstream.txt 90
plan_bench ws_CO bench_CO bench/matrix_wstream.txt 90
