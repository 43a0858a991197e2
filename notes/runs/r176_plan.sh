# run 176 (session 39; ~110 s of command, on an H200 only: any other GPU runs nothing): runs 174-175's questions on
# the GPU that has the gap (run 153: kernel 8's bf16 M = 8 launch ~2 us longer than the bare ring inside ncu; the H100
# has ~0.6-0.9 us). (1) probe_start's span of the bare rings (tma3d_p0, bulk384) beside TL3 of main and ER (run 172:
# kernel 8's M = 8 span 32.13 us); (2) A / NW / NX / NB / ER over bench/matrix_k8_stream.txt, four passes in rotating
# order (on the H100 NW was 0.6-0.7 us faster at M = 8, NX ~1 us slower, ER level); (3) the bar rows A / NW.
# BIN bench_ER maxgemm_bench notes/runs/r175_exp_er.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
# BIN bench_NX maxgemm_bench notes/runs/r174_exp_nx.diff
# BIN bench_NB maxgemm_bench notes/runs/r174_exp_nb.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
# BIN tl3er maxgemm notes/runs/r175_exp_er_tl3.diff
#   tools/pack_bundle.sh notes/runs/r176_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run176.sh $OUT        (carry ["bundle"], timeout 300)
. bundle/plan_lib.sh; plan_init "$1" r176
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
for v in tma3d_p0 bulk384; do
    timeout 60 bundle/bin/probe_start $v 128 20 span >> "$O/probe_span.csv" 2>> "$O/probe_span.log"
done
plan_step "probe_start span rc $?"
plan_abx abl bench/matrix_k8_stream.txt A_1 NW_1 NX_1 NB_1 ER_1 ER_2 NB_2 NX_2 NW_2 A_2 \
    NX_3 A_3 ER_3 NW_3 NB_3 NW_4 ER_4 A_4 NB_4 NX_4
plan_tl3 tl3 "8 64" "1 0"
plan_tl3 tl3er "8 64" "1 0"
plan_abx bar bench/matrix_bar.txt A_1 NW_1 NW_2 A_2
