# run 152 (prepared in session 32, not run: device time spent): Q, THE OWN-SUM WARP (notes/runs/r152_exp_own_sum_warp.diff).
# Where a CTA finishes its own rows (gown: every max_dim 0 plan at M <= 64), the producer warpgroup's idle warp 3 sums
# the CTA's column maxima from gcol and stores its slot, woken by an mbarrier every consumer thread arrives at after
# its epilogues; the consumers only wait for mu and write their GELUs. Run 149's TL4 put ~0.65 us between a CTA's
# epilogue end and its slot store (grid_finish's call 0.13, a barrier 0.06, the sum through consumers_sum's tree of
# every consumer warp and a second barrier 0.48, the tag 0.10): on the last CTA that is on every CTA's path (the
# others wait for its slot). Q's path: one mbarrier arrive and wake, a 2-per-lane sum, one warp's 5-level tree, the
# store. Prediction: the last slot stored ~0.3-0.4 us earlier, bf16 / tf32 max_dim 0 at M <= 64 0.3-0.4 us faster,
# the rest level (the consumer k-loops' SASS must be as main's: tools/sass_kloop_diff.py before the call).
# Steps: the slots test under racecheck / synccheck, determinism, planted_nonfinite, the swapab tests; A Q Q A over
# bench/matrix_poller.txt; TL3 of Q and of main at bf16 M = 8 / 64 max_dim 0 (stamp 5 is Q's warp-3 store).
# BIN bench_Q maxgemm_bench notes/runs/r152_exp_own_sum_warp.diff
# BIN test_Q test_maxgemm notes/runs/r152_exp_own_sum_warp.diff
# BIN tl3q maxgemm notes/runs/r152_exp_own_sum_warp_tl3.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r152_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run152.sh $OUT        (carry ["bundle"], timeout 300; ~150 s)
#   then here: tools/ab_variants.py OUT/r152/ab_*.csv; tools/timeline_summary.py OUT/r152/tl3*_d0_m*_r*.txt (the tail
#   after the last epilogue, and each CTA's epilogue -> slot stored: Q's is its warp 3's store)
. bundle/plan_lib.sh; plan_init "$1" r152
plan_sanitize test_Q 'gpu_kernels/swapab_md0_slots' Q 60 racecheck synccheck
plan_ab bench/matrix_poller.txt A_1 Q_1 Q_2 A_2
for m in 8 64; do
    for r in 1 2 3; do
        for b in tl3q tl3; do
            plan_cli ${b}_d0_m${m}_r$r $b 30 --kernel 8 -p bf16 -m $m -d 0 --no-shortcut --no-baseline -i 30 -w 3
        done
    done
    plan_step "timelines m$m"
done
plan_suite test_Q 'gpu_determinism/*' determinism_Q 90 --verbose
plan_suite test_Q 'gpu_kernels/planted_nonfinite' nonfinite_Q 60 --verbose
plan_suite test_Q 'gpu_kernels/swapab_*' swapab_Q 150 --verbose
