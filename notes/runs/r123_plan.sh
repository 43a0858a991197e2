# prepared run 123 (sessions 22 and 23 had no device machine): run 122's plan (never run: session 21 found no device;
# its script, notes/runs/r122_plan.sh, is deleted: this one runs all of it) plus THE WARM RUN
# (notes/runs/r123_plan_warm_finish.diff), its timeline, its GPU tests and a racecheck of them, and U (the warpgroup
# index made warp-uniform, notes/runs/r123_plan_uniform_wg.diff) and EU (U plus the early issue by elect.sync,
# notes/runs/r123_plan_early_issue_elect.diff; its GPU suites: run 124's plan, from this pack), and C, the merge
# candidate (EU with G and W: notes/runs/r123_plan_combined.diff; its GPU suites and its full benchmark: run 125's
# plan, from this pack).
# The binaries (maxgemm, maxgemm_bench: main's):
# BIN tl_F maxgemm notes/runs/r122_plan_finish_timeline.diff
# BIN tl_FW maxgemm notes/runs/r123_plan_finish_timeline_warm.diff
# BIN bench_G maxgemm_bench notes/runs/r122_plan_gelu_f32.diff
# BIN bench_I maxgemm_bench notes/runs/r122_plan_inline_finish.diff
# BIN bench_W maxgemm_bench notes/runs/r123_plan_warm_finish.diff
# BIN test_W test_maxgemm notes/runs/r123_plan_warm_finish.diff
# BIN bench_GW maxgemm_bench notes/runs/r123_plan_gelu_f32_warm.diff
# BIN bench_U maxgemm_bench notes/runs/r123_plan_uniform_wg.diff
# BIN bench_EU maxgemm_bench notes/runs/r123_plan_early_issue_elect.diff
# BIN test_EU test_maxgemm notes/runs/r123_plan_early_issue_elect.diff
# BIN bench_C maxgemm_bench notes/runs/r123_plan_combined.diff
# BIN test_C test_maxgemm notes/runs/r123_plan_combined.diff
# bundle/ is gitignored and a new checkout has none: build and pack it first (no GPU needed, ~15-20 minutes on 2
# cores), then the device command (carry ["bundle"]):
#   tools/pack_bundle.sh notes/runs/r123_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run123.sh $OUT
# ~8.5 minutes. Read the timelines with tools/timeline_summary.py, the A/B with tools/ab_variants.py r123 (each
# variant's times against A's by precision, max_dim and M range, and bf16's M <= 64 rows in us).
#
# What it answers (notes/18_small_m.md, "Session 22"):
#  1. where max_dim 0's ~1.8-2 us between the slowest CTA's epilogue and mu go (TF stamps inside the grid finish),
#     and whether the warm run shortens them (tl_FW beside tl_F, bf16 M = 8 and 64);
#  2. whether L2 limits max_dim 1 at M = 64 (ncu, M = 8 against M = 64);
#  3. A G I W GW X U EU C C EU U X GW W I G A over bench/matrix_ticket.txt: the fp32 GELU (G), the finish inlined (I),
#     the warm run (W), both G and W (GW), M = 17-64 on 128 W rows per CTA (X: main's binary with the table
#     notes/runs/r123_dispatch_x.tsv, whose M = 17-64 rows take mg_options.w_rows = 128; the matrix checks every
#     row's output),
#     the uniform warpgroup index (U: two-consumer k-loops without R2UR, the M > 64 rows), U with the early issue
#     (EU: the first stages issued before the CTA barrier, the M <= 64 rows), and C (EU + GW: what would be merged if
#     each wins; if C is ahead of A on every range and each part holds its own, run 125 tests and benchmarks C);
#  4. two passes of bench/matrix_md0_cluster.txt (the table's clusters-of-2 max_dim 0 picks against clusters of 1);
#  5. W's correctness: the swapab GPU suites, then racecheck on swapab_md0_slots (the warm run writes sh and reads
#     gcol before the epilogues). The determinism suites of W and EU and EU's own suites: run 124 (same pack).
O=$1/r123; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for v in F FW; do for d in 0 1; do for m in 8 64; do
  [ $v = FW ] && [ $d = 1 ] && continue   # the warm run is max_dim 0's only
  timeout 20 bundle/bin/tl_$v run --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 5 -w 1 > $O/tl_${v}_d${d}_m$m.txt 2>&1
done; done; done
echo "timeline t=$(el)" >> $O/steps.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for m in 8 64; do
  timeout 120 $NCU --clock-control none -k regex:swapab_kernel -s 2 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --metrics lts__t_bytes.sum.per_second,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum.per_second \
    bundle/bin/maxgemm run --kernel 8 -p bf16 -m $m -d 1 --no-shortcut --no-baseline -i 3 -w 1 > $O/ncu_m$m.txt 2>&1
  echo "ncu m$m rc $? t=$(el)" >> $O/steps.txt
done
D="--dispatch tile_configs/dispatch/h200.tsv"
for step in A_1 G_1 I_1 W_1 GW_1 X_1 U_1 EU_1 C_1 C_2 EU_2 U_2 X_2 GW_2 W_2 I_2 G_2 A_2; do
  v=${step%_*}; bin=bundle/bin/maxgemm_bench; T=$D
  case $v in A) ;; X) T="--dispatch notes/runs/r123_dispatch_x.tsv" ;; *) bin=bundle/bin/bench_$v ;; esac
  timeout 60 $bin $T --matrix bench/matrix_ticket.txt --csv $O/ab_$step.csv > $O/ab_$step.log 2>&1
  echo "ab $step rc $? t=$(el)" >> $O/steps.txt
done
for step in 1 2; do   # the table's clusters-of-2 max_dim 0 picks against clusters of 1 (notes/dispatch.md)
  timeout 60 bundle/bin/maxgemm_bench --matrix bench/matrix_md0_cluster.txt --csv $O/cl_$step.csv > $O/cl_$step.log 2>&1
  echo "md0 cluster $step rc $? t=$(el)" >> $O/steps.txt
done
tar czf $1/r123.tgz -C $1 r123   # what there is so far, should the tests below run out of time
timeout 200 bundle/bin/test_W --jobs 1 --filter 'gpu_kernels/swapab*' > $O/test_W.log 2>&1
echo "test_W swapab rc $? t=$(el)" >> $O/steps.txt
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 90 $SAN --tool racecheck --target-processes all --error-exitcode 99 bundle/bin/test_W --jobs 1 \
  --filter 'gpu_kernels/swapab_md0_slots' > $O/racecheck_W.log 2>&1
echo "racecheck_W rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r123.tgz -C $1 r123
