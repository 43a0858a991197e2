# run 157 (session 33, an H200, ~170 s; ~450 s with runs 158 (PA, CP) and 159 (QG) at its end, each step packed as it
# ends): main with PN (kernel 8's W map without L2 promotion, merged pending this
# measurement) against O, the old map (notes/runs/r157_exp_old_promo.diff), on an H200; then main's benchmark.
# Prediction (run 155's probe; run 156's H100 A/B was level, where the H100's stream had no such gap): bf16 M <= 64
# 1.5-2 us faster in both max_dims, tf32 M <= 64 2-4 us, M > 64 level to slightly faster. If O wins, PN is reverted
# and the benchmark CSV discarded.
# BIN bench_O maxgemm_bench notes/runs/r157_exp_old_promo.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
# BIN bench_PA maxgemm_bench notes/runs/r158_exp_promo_2d.diff
# BIN bench_CP maxgemm_bench notes/runs/r143_exp_plain_launch.diff
# BIN bench_QG maxgemm_bench notes/runs/r159_exp_qg.diff
# BIN test_QG test_maxgemm notes/runs/r159_exp_qg.diff
#   tools/pack_bundle.sh notes/runs/r157_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run157.sh $OUT        (carry ["bundle"], timeout 600)
#   then here: tools/ab_variants.py OUT/r157/ab_*.csv; tools/sweep_summary.py OUT/r157/bench_nvidia_h200.csv;
#   bench_<gpu>.csv -> bench/results/h200.csv if PN holds (run
#   151's kept as h200_r151.csv), `make plots`; tools/timeline_summary.py OUT/r157/tl3_*.txt; run 158:
#   tools/ab_variants.py OUT/r158/ab_*.csv and tools/ab_variants.py --split 0 OUT/r158/promo_*.csv
. bundle/plan_lib.sh; plan_init "$1" r157
# in order of need, each step packed as it ends. Run 157's own steps are the H200's questions (run 156 measured PN on
# an H100): on another GPU the call goes straight to runs 158-159, which either GPU answers.
if [ "$PLAN_GPU" = nvidia_h200 ]; then
plan_ab bench/matrix_poller.txt A_1 O_1 O_2 A_2
timeout 200 bundle/bin/maxgemm_bench --matrix bench/matrix.txt --csv $O/bench_$PLAN_GPU.csv > $O/bench.log 2>&1
plan_step "bench ($PLAN_GPU, compiled-in tables) rc $? rows $(wc -l < $O/bench_$PLAN_GPU.csv 2>/dev/null)"
plan_bench bar_A_1 maxgemm_bench bench/matrix_bar.txt 60
plan_bench bar_O_1 bench_O bench/matrix_bar.txt 60
plan_bench bar_A_2 maxgemm_bench bench/matrix_bar.txt 60
# TL3 on main with PN: does the M = 32-64 k-loops' spread (run 153: CTA pairs 3-4 us early) shrink with the 1.25x
# L2 -> SM traffic gone (if the late CTAs were limited by a per-GPC ingress share, it should)?
for m in 8 32 64; do
    for d in 1 0; do
        plan_cli tl3_d${d}_m${m} tl3 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
    done
done
plan_step "timelines"
plan_python libmaxgemm.so check_model 60 --quick
for s in gpu_api gpu_dispatch gpu_shortcut; do plan_suite test_maxgemm "$s/*" $s 60 --verbose; done
else
    plan_step "not an H200 ($PLAN_GPU): run 157's steps skipped"
fi
# run 158 in the same call, if time is left: PA (notes/runs/r158_exp_promo_2d.diff), every 2-D TMA map (x and W of
# kernels 3, 4 and 6 (kernels/ws_host.cuh) and 10, x of kernel 8) without L2 promotion. Their rows are 16 KiB or
# longer, so the 256-byte promotion pulls in the next box along K, which the same CTA loads next: prediction level
# (+-1%), unlike the panels' 128-byte rows. bench/matrix_promo.txt (kernels 4, 6, 10 at the headline, auto at
# M = 2048 / 16384) and kernel 8's rows (bench/matrix_poller.txt: x's map at M = 32-64, where x's traffic is 0.5-1 x
# W's).
plan_init "$PLAN_ROOT" r158
plan_ab bench/matrix_poller.txt A_1 PA_1 PA_2 A_2
plan_bench promo_A_1 maxgemm_bench bench/matrix_promo.txt 90
plan_bench promo_PA_1 bench_PA bench/matrix_promo.txt 90
plan_bench promo_PA_2 bench_PA bench/matrix_promo.txt 90
plan_bench promo_A_2 maxgemm_bench bench/matrix_promo.txt 90
# last: run 143's CP on the H200 (max_dim 0's grid finish launched plainly: a diagnostic, co-residency unguaranteed):
# max_dim 0 - max_dim 1 is 2.6-3.8 us event timed (run 151's bar rows) but 2.3-2.4 us in ncu's durations (run 153),
# so ~0.3-1.4 us of max_dim 0 lies outside the kernel; the H100 had CP level (run 143). Prediction: level here too.
plan_bench bar_A_3 maxgemm_bench bench/matrix_bar.txt 60
plan_bench bar_CP_1 bench_CP bench/matrix_bar.txt 60
plan_bench bar_CP_2 bench_CP bench/matrix_bar.txt 60
plan_bench bar_A_4 maxgemm_bench bench/matrix_bar.txt 60
# run 159: QG (notes/runs/r159_exp_qg.diff) = run 152's Q (the own-sum warp: the producer's idle warp 3 sums the own
# rows and stores the slot) + from run 150's F2 the finish's two pieces off the k-loop: mu = g * (1 / N) and the GELU
# in fp32 (fp64 where c - mu leaves fp32's range), each consumer thread's column read before it waits for mu. Its
# k-loops and producer loops: main's in 33 of 36 configurations, the other 3 (clusters of 2, which never run the grid
# finish) 2 lines apart before the loop (a MOV for an IMAD.MOV). No spills; CPU tests 186/186.
# Floors: max_dim 0 at M <= 64 is max_dim 1 + 2.3-2.6 us of launch (run 153's ncu) after the same W stream; the tail
# after the last epilogue 2.0-2.7 us (TL3, runs 152-153), of which Q took ~0.2 us off the last slot's store and
# 0.0-0.2 us off the end. Prediction: bf16 / tf32 max_dim 0 M <= 64 0.3-0.5 us faster, the rest level.
plan_init "$PLAN_ROOT" r159
plan_sanitize test_QG 'gpu_kernels/swapab_md0_slots' QG 60 racecheck synccheck
plan_ab bench/matrix_poller.txt A_1 QG_1 QG_2 A_2
plan_suite test_QG 'gpu_determinism/*' determinism_QG 90 --verbose
plan_suite test_QG 'gpu_kernels/planted_nonfinite' nonfinite_QG 60 --verbose
plan_suite test_QG 'gpu_kernels/swapab_*' swapab_QG 150 --verbose
plan_suite test_QG 'gpu_dispatch/*' dispatch_QG 60 --verbose
