# run 146 (session 32): P2, run 145's poller with the two things its timelines and racecheck asked for
# (notes/runs/r146_exp_poller2.diff; notes/18_small_m.md "Session 32"). Run 145 (H100): P collapsed the spread of
# "mu known" over the CTAs (all within ~0.2 us, 1.4-1.8 us after the last epilogue; main: 1.2-2.5) and took ~0.5 us
# off max_dim 0's tail in the CLI, but only 0.3% in the benchmark at M <= 64 (1.8% bf16 M > 64): its poller slept
# 0.5-1 us between reads while more than 4 slots were missing, and at M <= 64 the last half of the CTAs end within
# ~0.6 us, so the last slots were found up to a sleep late. P2 sleeps only while more than half the slots are missing.
# Racecheck reported the own sum's handoff (bar.arrive by the consumers, bar.sync by the poller) as a race: P2 syncs
# on both sides (no wait added: each side waits for the other there anyway).
# Prediction: max_dim 0 at M <= 64 another 0.3-0.6 us faster than P (its end ~1.6 us after the last epilogue).
# BIN bench_P2 maxgemm_bench notes/runs/r146_exp_poller2.diff
# BIN test_P2 test_maxgemm notes/runs/r146_exp_poller2.diff
# BIN tl2P2 maxgemm notes/runs/r146_exp_poller2_tl2.diff
# BIN bench_P maxgemm_bench notes/runs/r145_exp_poller.diff
# BIN tl2 maxgemm notes/runs/r144_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r146_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run146.sh $OUT        (carry ["bundle"], timeout 400; ~200 s)
. bundle/plan_lib.sh; plan_init "$1" r146
plan_sanitize test_P2 'gpu_kernels/swapab_md0_slots' P2 60 racecheck synccheck
plan_ab bench/matrix_poller.txt A_1 P2_1 P_1 P2_2 A_2
for m in 8 64; do
    for r in 1 2 3; do
        for b in tl2P2 tl2; do
            plan_cli ${b}_d0_m${m}_r$r $b 30 --kernel 8 -p bf16 -m $m -d 0 --no-shortcut --no-baseline -i 30 -w 3
        done
    done
    plan_step "timelines m$m"
done
plan_suite test_P2 'gpu_kernels/swapab_*' swapab_P2 150 --verbose
plan_suite test_P2 'gpu_determinism/*' determinism_P2 120 --verbose
plan_suite test_P2 'gpu_kernels/planted_nonfinite' nonfinite_P2 120 --verbose
