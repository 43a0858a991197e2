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
# the call (the machine taken back); a session with its full budget runs it as it is. Session 26 (no device lent)
# rewrote its steps on tools/plan_lib.sh (the same steps, timeouts and file names).
#   tools/pack_bundle.sh notes/runs/r128_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run128.sh $OUT      (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r128
plan_ab bench/matrix_ticket.txt A_1 K_1 K_2 A_2
timeout 20 bundle/bin/tl_SK run --kernel 8 -p bf16 -m 8 -d 0 --no-shortcut --no-baseline -i 8 -w 1 > $O/tl_SK_d0_m8.txt 2>&1
plan_step "timeline rc $?"
plan_suite test_K 'gpu_kernels/swapab*' test_K_swapab 120
plan_sanitize test_K 'gpu_kernels/swapab_md0_slots' K 40 synccheck racecheck
plan_suite test_K 'gpu_*/*' test_K 300 --verbose
timeout 150 bundle/bin/bench_K --matrix bench/matrix.txt --csv $O/h200_K.csv > $O/bench_K.log 2>&1
plan_step "bench K rc $? rows $(wc -l < $O/h200_K.csv 2>/dev/null)"
