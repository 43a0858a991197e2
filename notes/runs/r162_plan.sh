# run 162 (session 34, either GPU; ~400 s on an H200, ~300 s on an H100): main with PK merged (kernel 10's slice maps
# without L2 promotion: run 161 on an H100, 0.5-3.2% faster at every M of bench/matrix_int8_promo.txt, both passes).
# On an H200: run 157's steps at last (two calls named nvidia-h200 got H100s): PN against O, main's benchmark into
# bench_nvidia_h200.csv, the bar rows, TL3, check_model and the first suites, then run 158's CP there. On either GPU:
# PK's checks that run 161 did not finish (gpu_kernels/ws_tile_configs, cut by that plan's 150 s timeout after 50/50
# passes; gpu_determinism and gpu_int8x3 on main), then on an H100 main's benchmark (bench_<gpu>.csv: PK across the
# whole sweep there).
# BIN bench_O maxgemm_bench notes/runs/r157_exp_old_promo.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
# BIN bench_CP maxgemm_bench notes/runs/r143_exp_plain_launch.diff
#   tools/pack_bundle.sh notes/runs/r162_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run162.sh $OUT        (carry ["bundle"], timeout 600)
#   then here: as run 157 (tools/ab_variants.py OUT/r162/ab_*.csv; tools/sweep_summary.py OUT/r162/bench_<gpu>.csv)
. bundle/plan_lib.sh; plan_init "$1" r162
if [ "$PLAN_GPU" = nvidia_h200 ]; then
plan_ab bench/matrix_poller.txt A_1 O_1 O_2 A_2
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 200   # the compiled-in tables
plan_abx bar bench/matrix_bar.txt A_1 O_1 A_2
for m in 8 32 64; do
    for d in 1 0; do
        plan_cli tl3_d${d}_m${m} tl3 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
    done
done
plan_step "timelines"
plan_python libmaxgemm.so check_model 60 --quick
for s in gpu_api gpu_dispatch gpu_shortcut; do plan_suite test_maxgemm "$s/*" $s 60 --verbose; done
fi
plan_suite test_maxgemm 'gpu_kernels/ws_tile_configs' ws_tile_configs 150 --verbose
plan_suite test_maxgemm 'gpu_determinism/*' determinism 90 --verbose
plan_suite test_maxgemm 'gpu_int8x3/*' int8x3 60 --verbose
if [ "$PLAN_GPU" = nvidia_h200 ]; then
plan_abx bar bench/matrix_bar.txt A_3 CP_1 CP_2 A_4
else
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 220
fi
