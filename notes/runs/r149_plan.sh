# run 149 (session 32): where a CTA's ~0.65 us from its epilogue's end to its slot store goes (run 147's TL3, H100:
# 0.64-0.70 us in every CTA, for ~0.25 us of code: a barrier, a 64-column fp64 sum, consumers_sum's tree, the tag,
# the store), and the same question for the epilogue itself (0.35-0.38 us from the k-loop's end). Hypothesis: the
# end's first reads of the constant bank (the finish's parameters: c[0x0][0x440..0x48f]) miss and go to DRAM, the W
# stream having evicted the parameter buffer from L2. TL4 (notes/runs/r149_exp_timeline4.diff) stamps six more points
# in the epilogue and the finish; CT (notes/runs/r149_exp_const_touch.diff) touches those constant lines in every
# consumer warp at its start. Prediction if the hypothesis holds: TL4's gaps sit at the first LDC after the k-loop and
# in grid_finish before the store; CT removes 0.2-0.5 us of each, both max_dims.
# BIN bench_CT maxgemm_bench notes/runs/r149_exp_const_touch.diff
# BIN tl4 maxgemm notes/runs/r149_exp_timeline4.diff
# BIN tl4ct maxgemm notes/runs/r149_exp_const_touch_tl4.diff
#   tools/pack_bundle.sh notes/runs/r149_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run149.sh $OUT        (carry ["bundle"], timeout 200; ~70 s)
. bundle/plan_lib.sh; plan_init "$1" r149
for r in 1 2 3; do
    for b in tl4 tl4ct; do
        plan_cli ${b}_d0_m8_r$r $b 30 --kernel 8 -p bf16 -m 8 -d 0 --no-shortcut --no-baseline -i 30 -w 3
        plan_cli ${b}_d1_m8_r$r $b 30 --kernel 8 -p bf16 -m 8 -d 1 --no-shortcut --no-baseline -i 30 -w 3
    done
done
plan_step timelines
plan_ab bench/matrix_bar.txt A_1 CT_1 CT_2 A_2
