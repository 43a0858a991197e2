# run 142 (session 31): what max_dim 0's ~1.7-2 us after its mean are (run 141: every CTA knows mu ~1.45 us after the
# last epilogue; the event-timed gap to max_dim 1 is 3.2 us). Diagnostics of grid_finish's last loop (outputs WRONG,
# timing only): E1 stores c - mu without the GELU (notes/runs/r142_exp_no_gelu.diff), E2 computes the fp64 GELU and
# stores nothing (r142_exp_no_store.diff), E3 neither (r142_exp_neither.diff). A - E1 is the GELU's cost, A - E2 the
# output stores' (and their drain before the grid completes), A - E3 both. Prediction: the drain ~0.5 us (one store
# round trip), the GELU 0.2-0.3 us of fp64 arithmetic, more if its code is fetched cold at the end of the stream.
# bf16 max_dim 0 at M = 8 and 64 with the CLI (30 samples, L2 flushed, kernel 8), A E1 E2 E3 E3 E2 E1 A; max_dim 1 with
# A as the control.
# BIN cli_E1 maxgemm notes/runs/r142_exp_no_gelu.diff
# BIN cli_E2 maxgemm notes/runs/r142_exp_no_store.diff
# BIN cli_E3 maxgemm notes/runs/r142_exp_neither.diff
#   tools/pack_bundle.sh notes/runs/r142_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run142.sh $OUT        (carry ["bundle"], timeout 200; ~30 s)
. bundle/plan_lib.sh; plan_init "$1" r142
for step in A_1 E1_1 E2_1 E3_1 E3_2 E2_2 E1_2 A_2; do
    v=${step%_*}; bin=maxgemm; [ $v = A ] || bin=cli_$v
    for m in 8 64; do for d in 0 1; do
        [ $d = 1 ] && [ $v != A ] && continue
        plan_cli ${step}_d${d}_m$m $bin 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
    done; done
    plan_step "$step"
done
