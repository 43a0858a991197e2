# run 198 (session 44; ~180 s on an H200, ~2 s elsewhere): run 196's diagnostic steps first, for a call with little
# device time left: the bare ring's span and fin8, TL3 at bf16 M = 8, 32, 64 both max_dims, the bar rows A / NW / NW / A
# (is the H200's gap to the bare ring the tensor clock?), then main's benchmark if the limit allows (the h200.csv
# candidate; the plan packs each step, so a call cut short keeps what finished). Run 195's bundle.
# BIN tl3 maxgemm notes/runs/r195_exp_tl3.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r195_plan.sh      (the bundle is run 195's; this plan runs from the checkout)
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r198_plan.sh $OUT        (carry ["bundle"])
. bundle/plan_lib.sh; plan_init "$1" r198
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
plan_span tma3d_p0 tma3d_finp tma3d_fin8 tma3d_p0
plan_tl3 tl3 "8 32 64" "1 0"
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_step "done"
