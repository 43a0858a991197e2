# run 126 (session 24): main with U merged (the warpgroup index made warp-uniform, run 123's one winner) and the
# table's max_dim 0 edit: the full benchmark (the CSV that becomes bench/results/h200.csv), racecheck / synccheck /
# initcheck on the max_dim 0 slots test, then the whole GPU suite (last: C, U's superset, passed it in run 125, and
# the session had ~12 minutes of device time left). No variants: tools/pack_bundle.sh notes/runs/r126_plan.sh packs main's make bundle alone.
#   tar xJf bundle/pack.tar.xz && bash bundle/run126.sh $OUT      (carry ["bundle"], timeout 600)
O=$1/r126; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 180 bundle/bin/maxgemm_bench --matrix bench/matrix.txt --csv $O/h200.csv > $O/bench.log 2>&1
echo "bench rc $? rows $(wc -l < $O/h200.csv 2>/dev/null) t=$(el)" >> $O/steps.txt
tar czf $1/r126.tgz -C $1 r126
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck synccheck initcheck; do
  timeout 40 $SAN --tool $tool --target-processes all --error-exitcode 99 bundle/bin/test_maxgemm --jobs 1 \
    --filter 'gpu_kernels/swapab_md0_slots' > $O/${tool}.log 2>&1
  echo "${tool} rc $? t=$(el)" >> $O/steps.txt
done
tar czf $1/r126.tgz -C $1 r126
timeout 290 bundle/bin/test_maxgemm --jobs 1 --filter 'gpu_*/*' > $O/test.log 2>&1
echo "test gpu rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r126.tgz -C $1 r126
