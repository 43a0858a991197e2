# run 147 (session 32): main with THE POLLER (P3: run 146's P2 with the own sum handed over by an mbarrier, which
# racecheck orders; runs 145-146's named-barrier forms were reported by racecheck / synccheck). The merge check of a
# change to kernel 8's files only (kernels/swapab_finish.cuh, swapab_kernel.cuh, 08_wgmma_swapab.cu): the suites
# that run kernel 8 (gpu_api, gpu_dispatch, gpu_shortcut, gpu_determinism, gpu_kernels' swapab and generic tests),
# check_model --quick, synccheck / racecheck on the slots test; then A O O A over bench/matrix_poller.txt (O: main
# before the poller, notes/runs/r147_exp_old_main.diff), and TL3, the light timeline with three more marks in the
# finish (slot stored, the poller's last slot seen, its own sum seen: notes/runs/r147_exp_light_timeline.diff), at
# bf16 M = 8 and 64, max_dim 0. On an H200 also: main's benchmark (bench/matrix.txt: the committed h200.csv's
# successor), probe_start beside the bar rows, the M = 256 re-measure.
# Prediction: every suite passes, sanitizers clean; A / O 1.005-1.01 at bf16 max_dim 0 M <= 64, level elsewhere.
# BIN bench_O maxgemm_bench notes/runs/r147_exp_old_main.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r147_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run147.sh $OUT        (carry ["bundle"], timeout 600; ~330 s, ~550 s on an H200)
. bundle/plan_lib.sh; plan_init "$1" r147
plan_sanitize test_maxgemm 'gpu_kernels/swapab_md0_slots' A 60 racecheck synccheck
for s in $PLAN_FIRST_SUITES gpu_determinism; do plan_suite test_maxgemm "$s/*" ${s}_A 90 --verbose; done
plan_suite test_maxgemm 'gpu_kernels/swapab_*' swapab_A 150 --verbose
plan_ab bench/matrix_poller.txt A_1 O_1 O_2 A_2
for m in 8 64; do
    for r in 1 2 3; do
        plan_cli tl3_d0_m${m}_r$r tl3 30 --kernel 8 -p bf16 -m $m -d 0 --no-shortcut --no-baseline -i 30 -w 3
    done
    plan_step "timelines m$m"
done
case $PLAN_GPU in *h200*)
    timeout 170 bundle/bin/maxgemm_bench --matrix bench/matrix.txt --csv $O/${PLAN_GPU}_A.csv > $O/bench_A.log 2>&1
    plan_step "bench A ($PLAN_GPU) rc $? rows $(wc -l < $O/${PLAN_GPU}_A.csv 2>/dev/null)"
    timeout 60 bundle/bin/probe_start > $O/probe_start_1.csv 2>&1
    plan_step "probe_start rc $?"
    plan_bench bar_A_1 maxgemm_bench bench/matrix_bar.txt 60
    for i in 1 2; do plan_bench remeasure_$i maxgemm_bench bench/matrix_remeasure.txt 60; done ;;
esac
for t in planted_nonfinite random_inputs partial_maxima; do
    plan_suite test_maxgemm "gpu_kernels/$t" ${t}_A 120 --verbose
done
plan_python libmaxgemm.so check_model 120 --quick
