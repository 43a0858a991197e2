# run 161 (session 34, either GPU; ~450 s on an H200, ~250 s on an H100): run 157's H200 steps again (run 157's call got
# an H100, which ran only runs 158-159), then QGf and PK on either GPU, then CP on an H200.
# QGf (notes/runs/r161_exp_qgf.diff) is run 159's QG with its race fixed: QG's consumers read their own column of gcol
# after only their arrival on gcol_bar, but the epilogue's lanes 4q write the columns of other threads; run 159's
# racecheck found it (3,900+ hazards per launch, outputs wrong under the sanitizer's schedule) while the determinism
# and swapab suites passed at speed. QGf reads gcol after a consumers' barrier (named barrier 3, off the slot's path:
# the own-sum warp stores the slot without it). Prediction: as QG on the H100 (run 159: bf16 max_dim 0 M <= 64 1.006 by
# time, 0.1-0.4 us), the rest level; racecheck 0.
# PK (notes/runs/r161_exp_pk.diff): mg_make_tma_2d takes the L2 promotion (as mg_make_tma_3d since PN); kernel 10's
# slice maps pass NONE, every other map 256 B as before. Run 158's PA (every 2-D map without promotion) had kernel 10
# 3.5% faster at M = 2048 and 0.8% at 1024 on an H100, the other kernels level to -1.6% (bf16 max_dim 0 M = 768).
# Prediction: kernel 10 +1-4% at M >= 1024 (bench/matrix_int8_promo.txt), level below; gpu_int8x3 and gpu_kernels pass.
# BIN bench_PK maxgemm_bench notes/runs/r161_exp_pk.diff
# BIN test_PK test_maxgemm notes/runs/r161_exp_pk.diff
# BIN bench_O maxgemm_bench notes/runs/r157_exp_old_promo.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
# BIN bench_CP maxgemm_bench notes/runs/r143_exp_plain_launch.diff
# BIN bench_QGf maxgemm_bench notes/runs/r161_exp_qgf.diff
# BIN test_QGf test_maxgemm notes/runs/r161_exp_qgf.diff
#   tools/pack_bundle.sh notes/runs/r161_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run161.sh $OUT        (carry ["bundle"], timeout 600)
#   then here: as run 157 (tools/ab_variants.py OUT/r161/ab_*.csv: O and QGf; sweep_summary of bench_nvidia_h200.csv)
. bundle/plan_lib.sh; plan_init "$1" r161
if [ "$PLAN_GPU" = nvidia_h200 ]; then
plan_ab bench/matrix_poller.txt A_1 O_1 O_2 A_2
timeout 200 bundle/bin/maxgemm_bench --matrix bench/matrix.txt --csv $O/bench_$PLAN_GPU.csv > $O/bench.log 2>&1
plan_step "bench ($PLAN_GPU, compiled-in tables) rc $? rows $(wc -l < $O/bench_$PLAN_GPU.csv 2>/dev/null)"
plan_bench bar_A_1 maxgemm_bench bench/matrix_bar.txt 60
plan_bench bar_O_1 bench_O bench/matrix_bar.txt 60
plan_bench bar_A_2 maxgemm_bench bench/matrix_bar.txt 60
for m in 8 32 64; do
    for d in 1 0; do
        plan_cli tl3_d${d}_m${m} tl3 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
    done
done
plan_step "timelines"
fi
plan_sanitize test_QGf 'gpu_kernels/swapab_md0_slots' QGf 60 racecheck synccheck
plan_ab bench/matrix_poller.txt A_3 QGf_1 QGf_2 A_4
plan_suite test_QGf 'gpu_determinism/*' determinism_QGf 90 --verbose
plan_suite test_QGf 'gpu_kernels/planted_nonfinite' nonfinite_QGf 60 --verbose
plan_suite test_QGf 'gpu_kernels/swapab_*' swapab_QGf 150 --verbose
for step in A_1 PK_1 PK_2 A_2; do
    v=${step%_*}
    bin=bench_PK
    [ "$v" = PK ] || bin=maxgemm_bench
    plan_bench pk_$step $bin bench/matrix_int8_promo.txt 90
done
plan_suite test_PK 'gpu_int8x3/*' int8x3_PK 90 --verbose
plan_suite test_PK 'gpu_kernels/*' kernels_PK 150 --verbose
if [ "$PLAN_GPU" = nvidia_h200 ]; then
plan_bench bar_A_3 maxgemm_bench bench/matrix_bar.txt 60
plan_bench bar_CP_1 bench_CP bench/matrix_bar.txt 60
plan_bench bar_CP_2 bench_CP bench/matrix_bar.txt 60
plan_bench bar_A_4 maxgemm_bench bench/matrix_bar.txt 60
plan_python libmaxgemm.so check_model 60 --quick
for s in gpu_api gpu_dispatch gpu_shortcut; do plan_suite test_maxgemm "$s/*" $s 60 --verbose; done
fi
