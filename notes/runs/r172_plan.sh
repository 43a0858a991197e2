# run 172 (prepared in session 37 for the first H200; ~480 s there; on any other GPU it runs nothing): everything the
# H200 owes issue 18 in one call, most needed first. (1) main's benchmark with the compiled-in tables into
# bench_nvidia_h200.csv: PN and PK measured on an H200 at last (the h200.csv candidate); (2) the bar rows twice; (3) TL3
# of bf16 kernel 8 at M = 8 / 32 / 64, both max_dims (does PN shrink the M = 32-64 early finishers of run 153?); (4)
# the H200's dispatch table re-tuned on main's current library as run 170 did the H100's (h200.tsv predates the
# poller, PN and PK): tf32 / bf16 and fp32 tunes, the pick on the device, the benchmark with the picked table.
# Here afterwards: sweep_summary on both CSVs; if the picked table's benchmark is the better, `make dispatch-pick
# TUNE_CSV='OUT/tune/tune.csv:tf32,bf16 OUT/tune_fp32/tune.csv:fp32'` (check its rows equal the device's), and that
# benchmark becomes bench/results/h200.csv (run 151's to h200_r151.csv); then `make plots`, README, notes.
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r172_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run172.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r172
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150   # the compiled-in tables (~95 s on an H100)
plan_abx bar bench/matrix_bar.txt A_1 A_2
plan_tl3 tl3 "8 32 64" "1 0"
plan_retune 150 90 130   # run 170's steps (tools/plan_lib.sh)
