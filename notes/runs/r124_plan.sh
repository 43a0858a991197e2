# prepared run 124 (session 23, no device): the correctness run for run 123's EU and W, from run 123's pack (its
# BIN lines build test_EU and test_W). Run it in the same session as run 123, after it:
#   tools/pack_bundle.sh notes/runs/r123_plan.sh            (if bundle/pack.tar.xz is not there yet)
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r124_plan.sh $OUT      (carry ["bundle"], timeout 600; ~9.5 minutes at most)
# EU (notes/runs/r123_plan_early_issue_elect.diff) changes the kernel's prologue for every configuration: the CTA
# barrier is named barrier 0 passed in each role's branch (clusters of 1), warp 0 issues the first stages before it,
# the consumers alone write the zero box. So it gets the whole GPU suite (every generic suite: odd shapes, planted
# NaN/inf, K = 0, partial maxima, kernel 8's own, determinism), then racecheck and synccheck on the max_dim 0 slots
# test (the early-issued stages, the zero box and the grid finish in one CTA). W gets its determinism suite (run 123
# runs its swapab suites and racecheck). The whole GPU suite took 226-268 s on a warm machine (runs 116-120).
O=$1/r124; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 370 bundle/bin/test_EU --jobs 1 --filter 'gpu_*/*' > $O/test_EU.log 2>&1
echo "test_EU gpu rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r124.tgz -C $1 r124
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck synccheck; do
  timeout 55 $SAN --tool $tool --target-processes all --error-exitcode 99 bundle/bin/test_EU --jobs 1 \
    --filter 'gpu_kernels/swapab_md0_slots' > $O/${tool}_EU.log 2>&1
  echo "${tool}_EU rc $? t=$(el)" >> $O/steps.txt
done
tar czf $1/r124.tgz -C $1 r124
timeout 100 bundle/bin/test_W --jobs 1 --filter 'gpu_determinism/*' > $O/test_W_determinism.log 2>&1
echo "test_W determinism rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r124.tgz -C $1 r124
