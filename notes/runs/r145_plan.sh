# run 145 (session 32): P, max_dim 0's grid finish with a poller warp (notes/runs/r145_exp_poller.diff; notes/18_small_m.md
# "Session 32"). Run 144h's light timeline (H100, main) put max_dim 0's extra time in the slots' handoff: the last
# CTA knows mu 1.3-1.5 us after its epilogue (its own sum, then one round trip for the others' slots), and 80-90% of
# the CTAs only 1.9-2.3 us after it (a poll that just missed the last slot: one more round trip over all 128 slots).
# P moves the polling to the producer warpgroup's idle warp 2 from the CTA's start: it re-reads only the slots still
# missing (sleeping while more than 4 are), so the last CTA finds the others' sums in registers and the others see
# its slot one round trip after it lands. Prediction: max_dim 0 at M <= 64 0.6-1.0 us faster (its end 1.3-1.9 us
# after the last epilogue instead of 2.5), max_dim 0 at M = 96-768 the same gain on a longer time, max_dim 1 level.
# Steps: P's kernel-8 tests, determinism and the slots' sanitizers; A P P A over bench/matrix_poller.txt (kernel 8's
# M range, both precisions and max_dims); the light timeline of P (tl2P) and of main (tl2) at bf16 M = 8 and 64; on
# an H200 also run 144's two H200 questions (probe_start beside the bar rows; the M = 256 re-measure); last, the
# generic gpu_kernels tests on P (they cover kernel 8 among the others: odd shapes, planted NaN / inf, partials).
# BIN bench_P maxgemm_bench notes/runs/r145_exp_poller.diff
# BIN test_P test_maxgemm notes/runs/r145_exp_poller.diff
# BIN tl2P maxgemm notes/runs/r145_exp_poller_tl2.diff
# BIN tl2 maxgemm notes/runs/r144_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r145_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run145.sh $OUT        (carry ["bundle"], timeout 600; ~400 s)
#   then here: tools/ab_variants.py OUT/r145/ab_*.csv; tools/timeline_summary.py OUT/r145/tl2*_d0_m*_r*.txt
. bundle/plan_lib.sh; plan_init "$1" r145
plan_suite test_P 'gpu_kernels/swapab_*' swapab_P 150 --verbose
plan_suite test_P 'gpu_determinism/*' determinism_P 120 --verbose
plan_ab bench/matrix_poller.txt A_1 P_1 P_2 A_2
for m in 8 64; do
    for r in 1 2 3; do
        for b in tl2P tl2; do
            plan_cli ${b}_d0_m${m}_r$r $b 30 --kernel 8 -p bf16 -m $m -d 0 --no-shortcut --no-baseline -i 30 -w 3
        done
    done
    plan_cli tl2P_d1_m${m}_r1 tl2P 30 --kernel 8 -p bf16 -m $m -d 1 --no-shortcut --no-baseline -i 30 -w 3
    plan_step "timelines m$m"
done
plan_sanitize test_P 'gpu_kernels/swapab_md0_slots' P 60 synccheck racecheck
case $PLAN_GPU in *h200*)
    for i in 1 2; do
        timeout 60 bundle/bin/probe_start > $O/probe_start_$i.csv 2>&1
        plan_step "probe_start $i rc $?"
        plan_bench bar_A_$i maxgemm_bench bench/matrix_bar.txt 60
        plan_bench bar_P_$i bench_P bench/matrix_bar.txt 60
    done
    for i in 1 2 3; do plan_bench remeasure_$i maxgemm_bench bench/matrix_remeasure.txt 60; done ;;
esac
plan_suite test_P 'gpu_kernels/*' kernels_P 200 --verbose
