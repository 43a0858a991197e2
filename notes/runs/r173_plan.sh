# run 173 (session 38): on an H200, run 172's plan (the benchmark, bar rows, TL3, the table re-tune; ~480 s). On any
# other GPU, main's final library checked whole as run 169 did, because two things changed since run 169 that no GPU
# has run: mg_make_tma_3d's box depth (kernel 8's W map, probe_start's tma3d map) and the re-tuned H100 table, now
# compiled in (run 170 benchmarked the identical file through --dispatch). Every GPU suite (plan_check's order),
# check_model --quick, racecheck / synccheck on the slots test, tools/sanitize.sh over kernel 8, then main's benchmark
# with the compiled-in tables into bench_GPU_compiled.csv (the H100 row set should equal run 170's picked benchmark
# within the machine's noise).
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r173_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run173.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r173
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
    plan_abx bar bench/matrix_bar.txt A_1 A_2
    plan_tl3 tl3 "8 32 64" "1 0"
    plan_retune 150 90 130
    exit 0
fi
for s in $PLAN_FIRST_SUITES; do plan_suite test_maxgemm "$s/*" ${s}_A 90 --verbose; done
plan_python libmaxgemm.so check_model 120 --quick
for s in $(plan_other_suites test_maxgemm); do plan_suite test_maxgemm "$s/*" ${s}_A 240 --verbose; done
plan_sanitize test_maxgemm 'gpu_kernels/swapab_md0_slots' A 40 synccheck racecheck
TOOLS="memcheck racecheck synccheck" KERNELS="8" JOBS=8 TIMEOUT=120 LOGDIR=$O/sanitize-logs \
    timeout 150 bash tools/sanitize.sh bundle/bin > $O/sanitize_k8.txt 2>&1
plan_step "sanitize.sh kernel 8 rc $?"
plan_bench bench_${PLAN_GPU}_compiled maxgemm_bench bench/matrix.txt 150
