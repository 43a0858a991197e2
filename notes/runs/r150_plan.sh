# run 150 (session 32): F2, max_dim 0's finish with shorter dependency chains (notes/runs/r150_exp_finish_chain.diff).
# Run 149's TL4 (H100, bf16 M = 8): from a CTA's epilogue end to its slot store 0.65-0.9 us, of which 0.48 us is the
# column sum (a 64-column fp64 sum through gcol, consumers_sum's 5-level fp64 shuffle tree and a second barrier) and
# 0.10 us the tag's wait; mu known ~0.4 us after the poller's last slot (fp64 chain, tree, division), the GELU and the
# end ~0.4 us after it (fp64 erf). CT (the end's constant lines touched early) changed nothing: not constant misses.
# F2: THE OWN SUM (each epilogue adds its column maxima into a register, a 3-level warp tree, the warps' sums added in
# order after grid_finish's first barrier: no gcol pass, no consumers_sum, no second barrier), the tag read before
# that barrier, mu = g * (1 / N) with 1 / N computed by the poller at its start, the GELU in fp32 (the last CTA's
# finish's form, fp64 beyond fp32's range). Prediction: max_dim 0 at M <= 64 0.3-0.6 us faster; the k-loop's code
# moved in every configuration (esum is live across it), so max_dim 1 and M > 64 must come out level.
# BIN bench_F2 maxgemm_bench notes/runs/r150_exp_finish_chain.diff
# BIN test_F2 test_maxgemm notes/runs/r150_exp_finish_chain.diff
#   tools/pack_bundle.sh notes/runs/r150_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run150.sh $OUT        (carry ["bundle"], timeout 300; ~130 s)
. bundle/plan_lib.sh; plan_init "$1" r150
plan_ab bench/matrix_poller.txt A_1 F2_1 F2_2 A_2
plan_sanitize test_F2 'gpu_kernels/swapab_md0_slots' F2 60 racecheck synccheck
plan_suite test_F2 'gpu_determinism/*' determinism_F2 90 --verbose
plan_suite test_F2 'gpu_kernels/planted_nonfinite' nonfinite_F2 60 --verbose
plan_suite test_F2 'gpu_kernels/swapab_*' swapab_F2 150 --verbose
