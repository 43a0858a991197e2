# run 169 (session 37, either GPU, ~560 s): main's final library (PN and PK merged; unchanged since run 162).
# On an H200, the measurement first: main's benchmark into bench_nvidia_h200.csv (the h200.csv candidate; PN
# unmeasured there), the bar rows twice, TL3 of both max_dims at M = 8 / 32 / 64, then the checks below as time allows.
# On either GPU: every GPU suite of main's test binary (plan_check's order: the API, dispatch and short-circuit suites,
# the binding's check_model --quick, then every other gpu_* suite), racecheck / synccheck on the grid finish's slots
# test, and tools/sanitize.sh over kernels 8 and 10 (the two PN and PK changed: memcheck, racecheck, synccheck on the
# two odd shapes, every precision, both max_dims). The last full suite on main ran before PN and PK (run 151, H200);
# PN's and PK's own checks ran on H100s (runs 156, 161, 162).
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r169_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run169.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r169
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 200   # the compiled-in tables
    plan_abx bar bench/matrix_bar.txt A_1 A_2
    for m in 8 32 64; do
        for d in 1 0; do
            plan_cli tl3_d${d}_m${m} tl3 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
        done
    done
    plan_step "timelines"
fi
for s in $PLAN_FIRST_SUITES; do plan_suite test_maxgemm "$s/*" ${s}_A 90 --verbose; done
plan_python libmaxgemm.so check_model 120 --quick
plan_sanitize test_maxgemm 'gpu_kernels/swapab_md0_slots' A 40 synccheck racecheck
TOOLS="memcheck racecheck synccheck" KERNELS="8 10" JOBS=8 TIMEOUT=120 LOGDIR=$O/sanitize-logs \
    timeout 200 bash tools/sanitize.sh bundle/bin > $O/sanitize_k8_k10.txt 2>&1
plan_step "sanitize.sh kernels 8 10 rc $?"
for s in $(plan_other_suites test_maxgemm); do plan_suite test_maxgemm "$s/*" ${s}_A 300 --verbose; done
