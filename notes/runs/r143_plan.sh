# run 143 (session 31): is max_dim 0's ~1-1.5 us outside its CTAs' span the cooperative launch? (runs 141-142, H100:
# the finish up to the mean ~1.5 us, its GELU and stores <= 0.3 us, the event-timed gap to max_dim 1 3.2 us.) CP
# launches max_dim 0's grid finish plainly (notes/runs/r143_exp_plain_launch.diff; a diagnostic: correct only while
# all 128 CTAs happen to be resident, as they are on an idle 132-SM GPU); CC launches every clusters-of-1 kernel-8
# grid cooperatively, max_dim 1's included (r143_exp_coop_all.diff). Prediction: if the attribute costs the launch
# ~1 us, CP's max_dim 0 is ~1 us faster and CC's max_dim 1 ~1 us slower; run 121 had C level (0.995) on an H200.
# bf16 M = 8 and 64, both max_dims, the CLI (30 samples, flushed), A CP CC CC CP A.
# BIN cli_CP maxgemm notes/runs/r143_exp_plain_launch.diff
# BIN cli_CC maxgemm notes/runs/r143_exp_coop_all.diff
#   tools/pack_bundle.sh notes/runs/r143_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run143.sh $OUT        (carry ["bundle"], timeout 200; ~25 s)
. bundle/plan_lib.sh; plan_init "$1" r143
for step in A_1 CP_1 CC_1 CC_2 CP_2 A_2; do
    v=${step%_*}; bin=maxgemm; [ $v = A ] || bin=cli_$v
    for m in 8 64; do for d in 0 1; do
        plan_cli ${step}_d${d}_m$m $bin 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
    done; done
    plan_step "$step"
done
