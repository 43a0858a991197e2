# prepared run 122 (session 21 found no device for it; session 22 folded it into notes/runs/r123_plan.sh, which runs all of it). bundle/bin/maxgemm and maxgemm_bench: main's; tl_F: the CLI
# with notes/runs/r122_plan_finish_timeline.diff applied (tools/variant_build.sh F DIFF, its maxgemm); bench_G and
# bench_I: maxgemm_bench with r122_plan_gelu_f32.diff or r122_plan_inline_finish.diff applied (tools/variant_build.sh
# G|I DIFF). Session 21 left that bundle packed at bundle/pack.tar.xz (built at db74c7d; gitignored): device command
# tar xJf bundle/pack.tar.xz && bash bundle/run122.sh $OUT. Read the timelines with tools/timeline_summary.py, the
# A/B with tools/ab_compare.py or a paired per-row ratio of median times.
# run 122 (session 21): where max_dim 0's ~2 us after the slowest CTA goes: a timeline with stamps inside the grid
# finish (TF: after the CTA's barrier, after consumers_sum, after the slot store, the poll done (the warp's latest
# lane), after the xor tree; poll rounds of lane 0 and of the warp's most), bf16 M = 8, 64; and ncu's memory view of
# kernel 8 at bf16 max_dim 1 M = 8 and 64 (is L2 the limit at M = 64, where each CTA reads 1 MiB of x from L2?).
O=$1/r122; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for d in 0 1; do for m in 8 64; do
  timeout 20 bundle/bin/tl_F run --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 5 -w 1 > $O/tl_F_d${d}_m$m.txt 2>&1
done; done
echo "timeline t=$(el)" >> $O/steps.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for m in 8 64; do
  timeout 120 $NCU --clock-control none -k regex:swapab_kernel -s 2 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --metrics lts__t_bytes.sum.per_second,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum.per_second \
    bundle/bin/maxgemm run --kernel 8 -p bf16 -m $m -d 1 --no-shortcut --no-baseline -i 3 -w 1 > $O/ncu_m$m.txt 2>&1
  echo "ncu m$m rc $? t=$(el)" >> $O/steps.txt
done
D="--dispatch tile_configs/dispatch/h200.tsv"
for step in A_1 G_1 I_1 I_2 G_2 A_2; do
  bin=bundle/bin/maxgemm_bench; [ ${step%_*} != A ] && bin=bundle/bin/bench_${step%_*}
  timeout 60 $bin $D --matrix bench/matrix_ticket.txt --csv $O/ab_$step.csv > $O/ab_$step.log 2>&1
  echo "ab $step rc $? t=$(el)" >> $O/steps.txt
done
for step in 1 2; do   # the table's clusters-of-2 max_dim 0 picks against clusters of 1 (notes/dispatch.md)
  timeout 60 bundle/bin/maxgemm_bench --matrix bench/matrix_md0_cluster.txt --csv $O/cl_$step.csv > $O/cl_$step.log 2>&1
  echo "md0 cluster $step rc $? t=$(el)" >> $O/steps.txt
done
tar czf $1/r122.tgz -C $1 r122
