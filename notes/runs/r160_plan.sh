# NOT RUN (session 34): run 159 found a race in QG (racecheck) and run 161 measured its fix QGf level; kept as the
# form of a variant's merge check in two calls.
# run 160 (prepared in session 34, no device lent; for the session that runs 157): QG's merge check, only if run
# 159's A/B has QG ahead (bf16 / tf32 max_dim 0 at M <= 64, the rest level) and its sanitizers, determinism,
# nonfinite, swapab_* and dispatch suites passed there. Two calls, each under the 600 s limit, on the machine that ran
# run 157 (a warm one: no second start), from run 157's bundle (its BIN lines built bench_QG and test_QG; this plan
# names the same two, so `tools/pack_bundle.sh notes/runs/r160_plan.sh` packs them alone if run 157's bundle is gone):
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r160_plan.sh $OUT check    (carry ["bundle"], ~250 s)
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r160_plan.sh $OUT bench    (carry ["bundle"], ~330 s)
#   check: QG's other GPU suites (test_QG's own --list, less the four run 159 ran) and check_model --quick (against
#     main's libmaxgemm.so: the binding's checks; QG changes no host code)
#   bench: QG's benchmark with the compiled-in tables (bench_QG_<gpu>.csv: the successor of bench/results/h200.csv
#     if QG is merged), then the bar rows A QG QG A beside it
# then here: tools/sweep_summary.py OUT/r160_bench/bench_QG_nvidia_h200.csv; tools/ab_variants.py
#   OUT/r160_bench/bar_*.csv; if every suite passed: git apply notes/runs/r159_exp_qg.diff, the CSV to
#   bench/results/h200.csv (run 157's kept as h200_r157.csv), `make plots`, kernel 8's header figure.
# BIN bench_QG maxgemm_bench notes/runs/r159_exp_qg.diff
# BIN test_QG test_maxgemm notes/runs/r159_exp_qg.diff
. bundle/plan_lib.sh; plan_init "$1" r160_$2
if [ "$2" = check ]; then
    for s in $PLAN_FIRST_SUITES $(plan_other_suites test_QG); do
        case $s in gpu_determinism | gpu_dispatch) continue ;; esac   # run 159 ran these (and gpu_kernels' swapab_*)
        plan_suite test_QG "$s/*" ${s}_QG 200 --verbose
    done
    plan_python libmaxgemm.so check_model 120 --quick
elif [ "$2" = bench ]; then
    timeout 200 bundle/bin/bench_QG --matrix bench/matrix.txt --csv $O/bench_QG_$PLAN_GPU.csv > $O/bench_QG.log 2>&1
    plan_step "bench QG ($PLAN_GPU, compiled-in tables) rc $? rows $(wc -l < $O/bench_QG_$PLAN_GPU.csv 2>/dev/null)"
    for step in A_1 QG_1 QG_2 A_2; do
        v=${step%_*}
        bin=bench_QG
        [ "$v" = QG ] || bin=maxgemm_bench
        plan_bench bar_$step $bin bench/matrix_bar.txt 60
    done
else
    plan_step "usage: r160_plan.sh OUT check|bench (got '$2')"
fi
