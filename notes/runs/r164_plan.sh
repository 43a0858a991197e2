# run 164 (session 35): run 162's H200 steps alone, from run 162's bundle (its any-GPU steps and the H100 benchmark
# ran in run 162's call, which got an H100), most needed first. On an H200: main's benchmark (PN + PK) into
# bench_nvidia_h200.csv, the bar rows (A O A), PN against O over bench/matrix_poller.txt, TL3 of both max_dims at
# M = 8 / 32 / 64, check_model --quick, gpu_api / gpu_dispatch / gpu_shortcut, then run 143's CP against A over the
# bar rows. On any other GPU it does nothing (the call's only cost is the start).
#   tools/pack_bundle.sh notes/runs/r162_plan.sh
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r164_plan.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r164
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 200   # the compiled-in tables: the h200.csv candidate
plan_abx bar bench/matrix_bar.txt A_1 O_1 A_2
plan_ab bench/matrix_poller.txt A_1 O_1 O_2 A_2
for m in 8 32 64; do
    for d in 1 0; do
        plan_cli tl3_d${d}_m${m} tl3 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
    done
done
plan_step "timelines"
plan_python libmaxgemm.so check_model 60 --quick
for s in gpu_api gpu_dispatch gpu_shortcut; do plan_suite test_maxgemm "$s/*" $s 60 --verbose; done
plan_abx bar bench/matrix_bar.txt A_3 CP_1 CP_2 A_4
