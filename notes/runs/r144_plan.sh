# run 144 (prepared in session 31, not run: the session's device time ran out): where the rest of max_dim 0's 3.2 us
# over max_dim 1 is (runs 141-143, H100: ~1.0-1.45 us up to the mean; the GELU, the output stores and the cooperative
# launch cost nothing measurable; run 141's printf stamps perturb the finish). TL2 is a light timeline
# (notes/runs/r144_exp_light_timeline.diff: %globaltimer at each CTA's start, last k-loop end, epilogues' end, mean
# known, consumers' end, kept in device memory; the CLI prints the latest launch's after its samples). Per run:
# the CTAs' span from the first start to the last end. Prediction: if max_dim 0's span exceeds max_dim 1's by the
# event-timed gap (~3.2 us on an H100), the time is inside the CTAs and the marks say where; if by ~2 us, ~1 us is
# outside them (between the event and the first CTA start, or after the last CTA ends). The CLI's medians beside
# (TL2's build against main's: the stamps' own cost).
# On an H200 the same call also answers session 31's two open H200 questions (run it on the first H200 lent): the bf16
# M = 256 row re-measured (bench/matrix_remeasure.txt, 60 samples, three passes: run 134's 1.019 is within noise of
# 1.00), and tools/probe_start's bare read of W beside bench/matrix_bar.txt (is kernel 8 there its bare read + ~0.5 us
# at max_dim 1, as on the H100 in run 140, or ~2 us more?). On an H100 those steps re-measure the H100 instead.
# BIN tl2 maxgemm notes/runs/r144_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r144_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run144.sh $OUT        (carry ["bundle"], timeout 300; ~90 s)
#   then here: tools/timeline_summary.py OUT/r144/tl2_d*_m*_r*.txt
. bundle/plan_lib.sh; plan_init "$1" r144
for i in 1 2; do
    timeout 60 bundle/bin/probe_start > $O/probe_start_$i.csv 2>&1
    plan_step "probe_start $i rc $?"
    plan_bench bar_$i maxgemm_bench bench/matrix_bar.txt 60
done
for i in 1 2 3; do
    plan_bench remeasure_$i maxgemm_bench bench/matrix_remeasure.txt 60
done
for m in 8 64; do for d in 0 1; do
    args="--kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3"
    for r in 1 2 3 4 5; do plan_cli tl2_d${d}_m${m}_r$r tl2 30 $args; done
    plan_cli main_d${d}_m$m maxgemm 30 $args
    plan_step "d$d m$m"
done; done
