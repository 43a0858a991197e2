# run 128 (session 25): K, max_dim 0's grid finish given its parameters by value (notes/runs/r128_exp_grid_args.diff).
# Run 127's stamps found 0.45-0.67 us of the last CTA's finish in grid_finish's first parameter read: a __noinline__
# function given `const Params &` reads the fields through a generic pointer into the parameter buffer (LD.E), whose
# lines the W stream evicted from L2 (a DRAM round trip on the critical path); by value they come from the parameter
# constant bank in the kernel. SASS: every one-consumer configuration (M <= 64) the same k-loop and producer, the
# two-consumer ones the same k-loop length, producer R2UR 1 -> 0.
# BIN bench_K maxgemm_bench notes/runs/r128_exp_grid_args.diff
# BIN test_K test_maxgemm notes/runs/r128_exp_grid_args.diff
# BIN tl_SK maxgemm notes/runs/r128_exp_grid_args_stamps.diff
# A/B A K K A over bench/matrix_ticket.txt, the stamps on K (bf16 max_dim 0, M = 8), kernel 8's GPU suites on K, racecheck
# / synccheck on the slots test, then K's whole GPU suite, then K's full benchmark (the CSV that becomes
# bench/results/h200.csv if K wins; ~480 s in all). Session 25 slimmed it for the ~590 s it had left and then lost
# the call (the machine taken back); a session with its full budget runs it as it is.
#   tools/pack_bundle.sh notes/runs/r128_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run128.sh $OUT      (carry ["bundle"], timeout 600)
O=$1/r128; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
D="--dispatch tile_configs/dispatch/h200.tsv"
for step in A_1 K_1 K_2 A_2; do
  v=${step%_*}; bin=bundle/bin/maxgemm_bench
  [ $v = A ] || bin=bundle/bin/bench_$v
  timeout 60 $bin $D --matrix bench/matrix_ticket.txt --csv $O/ab_$step.csv > $O/ab_$step.log 2>&1
  echo "ab $step rc $? t=$(el)" >> $O/steps.txt
done
timeout 20 bundle/bin/tl_SK run --kernel 8 -p bf16 -m 8 -d 0 --no-shortcut --no-baseline -i 8 -w 1 > $O/tl_SK_d0_m8.txt 2>&1
echo "timeline t=$(el)" >> $O/steps.txt
tar czf $1/r128.tgz -C $1 r128
timeout 120 bundle/bin/test_K --jobs 1 --filter 'gpu_kernels/swapab*' > $O/test_K_swapab.log 2>&1
echo "test K swapab rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r128.tgz -C $1 r128
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in synccheck racecheck; do
  timeout 40 $SAN --tool $tool --target-processes all --error-exitcode 99 bundle/bin/test_K --jobs 1 \
    --filter 'gpu_kernels/swapab_md0_slots' > $O/${tool}_K.log 2>&1
  echo "${tool} K rc $? t=$(el)" >> $O/steps.txt
done
tar czf $1/r128.tgz -C $1 r128
timeout 300 bundle/bin/test_K --jobs 1 --verbose --filter 'gpu_*/*' > $O/test_K.log 2>&1
echo "test K gpu rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r128.tgz -C $1 r128
timeout 150 bundle/bin/bench_K --matrix bench/matrix.txt --csv $O/h200_K.csv > $O/bench_K.log 2>&1
echo "bench K rc $? rows $(wc -l < $O/h200_K.csv 2>/dev/null) t=$(el)" >> $O/steps.txt
tar czf $1/r128.tgz -C $1 r128
