# run 127 (session 25): where max_dim 0's in-CTA sum goes, whether the W stream's stragglers follow the W tile or the
# SM, fair-share pacing of the W stream (F), and the GPU suite owed by run 126.
# BIN tl_S maxgemm notes/runs/r127_exp_finish_stamps.diff
# BIN tl_SF4 maxgemm notes/runs/r127_exp_pace_d4_stamps.diff
# BIN bench_F4 maxgemm_bench notes/runs/r127_exp_pace_d4.diff
# BIN bench_F8 maxgemm_bench notes/runs/r127_exp_pace_d8.diff
# tl_S: run 122's TL / TP / TF stamps ported to 16cc020 plus TS (grid_finish's entry, after its first barrier,
# consumers_sum's start, after its shuffle tree, after its barrier): run 123's timeline put 0.75 us between the first
# barrier and consumers_sum's end in the last CTA. tl_SF4: the same stamps with F (D = 4). F4 / F8: every producer of
# a one-unit-per-CTA plan issues k-block it only once the grid's mean progress (a counter) is within D k-blocks of its
# own. A/B A F4 F8 F8 F4 A over bench/matrix_ticket.txt (read with tools/ab_variants.py). Then main's whole GPU suite
# (run 126's was cut by the budget).
#   tools/pack_bundle.sh notes/runs/r127_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run127.sh $OUT      (carry ["bundle"], timeout 600)
O=$1/r127; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for v in S SF4; do for d in 0 1; do for m in 8 64; do
  timeout 20 bundle/bin/tl_$v run --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 8 -w 1 > $O/tl_${v}_d${d}_m$m.txt 2>&1
done; done; done
echo "timeline t=$(el)" >> $O/steps.txt
D="--dispatch tile_configs/dispatch/h200.tsv"
for step in A_1 F4_1 F8_1 F8_2 F4_2 A_2; do
  v=${step%_*}; bin=bundle/bin/maxgemm_bench
  [ $v = A ] || bin=bundle/bin/bench_$v
  timeout 60 $bin $D --matrix bench/matrix_ticket.txt --csv $O/ab_$step.csv > $O/ab_$step.log 2>&1
  echo "ab $step rc $? t=$(el)" >> $O/steps.txt
done
tar czf $1/r127.tgz -C $1 r127
timeout 330 bundle/bin/test_maxgemm --jobs 1 --filter 'gpu_*/*' > $O/test.log 2>&1
echo "test gpu rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r127.tgz -C $1 r127
