# run 163 (session 34, the budget's last ~250 s): run 162's first questions alone, from run 162's bundle
# (bench_O): on an H200, PN against O over bench/matrix_poller.txt and the bar rows (A O A); on either GPU the one
# gpu_kernels test run 161's timeout cut (ws_tile_configs, with PK on main).
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r163_plan.sh $OUT        (carry ["bundle"])
. bundle/plan_lib.sh; plan_init "$1" r163
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    plan_ab bench/matrix_poller.txt A_1 O_1 O_2 A_2
    plan_abx bar bench/matrix_bar.txt A_1 O_1 A_2
fi
plan_suite test_maxgemm 'gpu_kernels/ws_tile_configs' ws_tile_configs 100 --verbose
