# run 141 (session 31): where max_dim 0's extra 3.4-4.0 us over a bare stream of W go (run 140, H100: max_dim 1 is
# the bare stream + 0.3-1.1 us, max_dim 0 + 3.4-4.0; runs 117-127's timelines put ~1.9 us between the last epilogue and
# the end of max_dim 0's grid finish). tl_S is run 127's stamps (TL / TP / TF / TS lines per CTA, %globaltimer;
# notes/runs/r127_exp_finish_stamps.diff, still applying to main) in the CLI. Per launch, tools/timeline_summary.py
# gives the CTA span (first start to last end) for max_dim 0 and 1: if max_dim 0's span exceeds max_dim 1's by the
# event-timed difference (~3 us), the time is inside the CTAs (the finish); if by less, the rest is outside them
# (the cooperative launch, the grid's completion). The CLI's own event-timed median for the same runs is in each file.
# BIN tl_S maxgemm notes/runs/r127_exp_finish_stamps.diff
#   tools/pack_bundle.sh notes/runs/r141_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run141.sh $OUT        (carry ["bundle"], timeout 200; ~20 s)
. bundle/plan_lib.sh; plan_init "$1" r141
for d in 0 1; do for m in 8 64; do
    timeout 30 bundle/bin/tl_S run --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 8 -w 1 \
        > $O/tl_S_d${d}_m$m.txt 2>&1
    plan_step "tl_S d$d m$m rc $?"
    timeout 30 bundle/bin/maxgemm run --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3 \
        > $O/main_d${d}_m$m.txt 2>&1
    plan_step "main d$d m$m rc $?"
done; done
