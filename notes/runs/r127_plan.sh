# run 127 (session 25): where max_dim 0's in-CTA sum goes, and the GPU suite owed by run 126.
# BIN tl_S maxgemm notes/runs/r127_exp_finish_stamps.diff
# tl_S: run 122's TL / TP / TF stamps ported to 16cc020 plus TS (grid_finish's entry, after its first barrier,
# consumers_sum's start, after its shuffle tree, after its barrier): run 123's timeline put 0.75 us between the first
# barrier and consumers_sum's end in the last CTA. Then main's whole GPU suite (run 126's was cut by the budget).
#   tools/pack_bundle.sh notes/runs/r127_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run127.sh $OUT      (carry ["bundle"], timeout 600)
O=$1/r127; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for m in 8 64; do
  timeout 20 bundle/bin/tl_S run --kernel 8 -p bf16 -m $m -d 0 --no-shortcut --no-baseline -i 5 -w 1 > $O/tl_S_d0_m$m.txt 2>&1
done
echo "timeline t=$(el)" >> $O/steps.txt
tar czf $1/r127.tgz -C $1 r127
timeout 330 bundle/bin/test_maxgemm --jobs 1 --filter 'gpu_*/*' > $O/test.log 2>&1
echo "test gpu rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r127.tgz -C $1 r127
