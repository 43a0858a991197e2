# run 199 (session 45; ~270 s of command on an H200, ~2 s elsewhere): main's whole GPU check on the H200 that run 196's
# benchmark (now bench/results/h200.csv) says nothing about, from the same bundle (run 195's: main dee7bc3's code,
# unchanged since in src/ and kernels/): the bar rows A twice more (~6 s), every gpu_* suite of test_maxgemm (--jobs 1),
# check_model.py --quick, racecheck / synccheck on kernel 8's slots test, tools/sanitize.sh on kernel 10. On any other
# GPU nothing (runs 180, 191 and 193 checked the same code on H100s). It sources tools/plan_lib.sh (the checkout's:
# run 195's bundle/plan_lib.sh lacks plan_require_gpu).
#   tools/pack_bundle.sh notes/runs/r195_plan.sh      (the bundle is run 195's; this plan runs from the checkout)
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r199_plan.sh $OUT        (carry ["bundle"], timeout 420)
. tools/plan_lib.sh; plan_init "$1" r199
plan_require_gpu nvidia_h200
plan_abx bar bench/matrix_bar.txt A_3 A_4
for s in $PLAN_FIRST_SUITES; do plan_suite test_maxgemm "$s/*" ${s}_A 90 --verbose; done
plan_python libmaxgemm.so check_model 120 --quick
for s in $(plan_other_suites test_maxgemm); do plan_suite test_maxgemm "$s/*" ${s}_A 240 --verbose; done
plan_sanitize test_maxgemm 'gpu_kernels/swapab_md0_slots' A 40 synccheck racecheck
TOOLS="memcheck racecheck synccheck" KERNELS="10" JOBS=8 TIMEOUT=120 LOGDIR=$O/sanitize-logs \
    timeout 150 bash tools/sanitize.sh bundle/bin > "$O/sanitize_k10.txt" 2>&1
plan_step "sanitize.sh kernel 10 rc $?"
plan_step "done"
