# run 175 (session 39; ~90 s of command on any GPU): ER, the W-stream rows (one consumer, NX <= 64; ER16: NX <= 16)
# releasing each stage as soon as its wgmmas are done (wgmma.wait_group 0, then the stage) instead of the previous
# stage after the next one's wgmmas are issued (wait_group 1). Run 174 (H100) had NW (no wgmmas, each stage released
# when full) 0.3-0.9 us faster than main at bf16 M = 8 / 64 in both max_dims, both passes, where NX (no x) was ~1 us
# slower. (1) A / ER / ER16 / NW / NB over bench/matrix_k8_stream.txt, four passes in rotating order; (2) A / ER over
# bench/matrix_bar.txt twice; (3) TL3 of main and of ER at M = 8 / 64, both max_dims; (4) probe_start's span of
# tma3d_p0 and bulk384 (the bare ring's span beside TL3's).
# BIN bench_ER maxgemm_bench notes/runs/r175_exp_er.diff
# BIN bench_ER16 maxgemm_bench notes/runs/r175_exp_er16.diff
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
# BIN bench_NB maxgemm_bench notes/runs/r174_exp_nb.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
# BIN tl3er maxgemm notes/runs/r175_exp_er_tl3.diff
#   tools/pack_bundle.sh notes/runs/r175_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run175.sh $OUT        (carry ["bundle"], timeout 300)
. bundle/plan_lib.sh; plan_init "$1" r175
plan_abx abl bench/matrix_k8_stream.txt A_1 ER_1 ER16_1 NW_1 NB_1 NB_2 NW_2 ER16_2 ER_2 A_2 \
    ER_3 A_3 NW_3 ER16_3 NB_3 ER16_4 NW_4 A_4 ER_4 NB_4
plan_abx bar bench/matrix_bar.txt A_1 ER_1 ER_2 A_2
plan_tl3 tl3 "8 64" "1 0"
plan_tl3 tl3er "8 64" "1 0"
for v in tma3d_p0 bulk384; do
    timeout 60 bundle/bin/probe_start $v 128 20 span >> "$O/probe_span.csv" 2>> "$O/probe_span.log"
done
plan_step "probe_start span rc $?"
