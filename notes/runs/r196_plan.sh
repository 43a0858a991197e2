# run 196 (session 44; ~420 s of command on an H200, ~2 s elsewhere): run 195's H200 steps with run 195's bundle
# (packed at dee7bc3, main's code since): main's benchmark into bench_nvidia_h200.csv (the h200.csv candidate), the
# finish's floor there (probe_start's span of tma3d_p0 / finp / fin8: also the bare ring's span, which the H200 has
# not had), TL3 at bf16 M = 8, 32, 64 both max_dims, the bar rows A / NW and ncu's SM clock for A and NW. On any other
# GPU nothing: run 195 already took main's benchmark on an H100 this session. The diagnostics go first (the span and
# TL3 ~10 s, the bar rows A / NW ~140 s), then the benchmark (~150 s), then the clock: every step is packed as it
# ends, so a call with little device time left (timeout ~180) still brings the split of the gap. (Run 198's plan, this
# order under another name for the session's last calls, is folded in here.)
# BIN tl3 maxgemm notes/runs/r195_exp_tl3.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
#   tools/pack_bundle.sh notes/runs/r195_plan.sh      (the bundle is run 195's; this plan runs from the checkout)
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r196_plan.sh $OUT        (carry ["bundle"], timeout 480)
. bundle/plan_lib.sh; plan_init "$1" r196
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
plan_span tma3d_p0 tma3d_finp tma3d_fin8 tma3d_p0
plan_tl3 tl3 "8 32 64" "1 0"
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_clock A bundle/bin/maxgemm_bench --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_clock NW bundle/bin/bench_NW --matrix bench/matrix_k8_stream.txt --csv /tmp/x.csv
plan_step "done"
