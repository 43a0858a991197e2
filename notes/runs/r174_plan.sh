# run 174 (session 39; ~170 s of command on any GPU, most informative on an H200): where kernel 8's bf16 M = 8 launch
# loses ~2 us to a bare read of W on the H200 (run 153's ncu: 33.9-34.1 against the bare ring's 32.0 us; run 172's
# TL3 span 32.13 us). (1) tools/probe_start's span mode: tma3d_p0 (kernel 8's W map and order in its 256-thread n8
# CTA, no x, no wgmma) and bulk384, 20 stamped launches each, first CTA entry -> last consumer end, the stamps of
# kernel 8's TL3; (2) A / NW / NX / NB over bench/matrix_k8_stream.txt, A NW NX NB NB NX NW A (kernel 8 as main, without
# its wgmmas (stages released when full), without x (zeros in smem, not loaded), without both): NB at the bare ring's
# time says the ~2 us is x and the wgmmas' (NX / NW split them), NB at A's says it is the rest of kernel 8 (its
# prologue, ticket, epilogue, finish); (3) TL3 of main at M = 8 / 64, both max_dims (spans beside (1)'s).
# BIN bench_NW maxgemm_bench notes/runs/r174_exp_nw.diff
# BIN bench_NX maxgemm_bench notes/runs/r174_exp_nx.diff
# BIN bench_NB maxgemm_bench notes/runs/r174_exp_nb.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r174_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run174.sh $OUT        (carry ["bundle"], timeout 420)
. bundle/plan_lib.sh; plan_init "$1" r174
for v in tma3d_p0 bulk384; do
    timeout 60 bundle/bin/probe_start $v 128 20 span >> "$O/probe_span.csv" 2>> "$O/probe_span.log"
done
plan_step "probe_start span rc $?"
plan_abx abl bench/matrix_k8_stream.txt A_1 NW_1 NX_1 NB_1 NB_2 NX_2 NW_2 A_2
plan_tl3 tl3 "8 64" "1 0"
for v in tma3d_p0; do
    timeout 60 bundle/bin/probe_start $v 128 20 span >> "$O/probe_span2.csv" 2>> "$O/probe_span.log"
done
plan_step "probe_start span again rc $?"
plan_suite test_maxgemm 'gpu_util/*' gpu_util 60 --verbose   # mg_fill_s8 (the int8 ceiling's inputs, now on the GPU)
plan_bench ceil maxgemm_bench bench/matrix_ceilings.txt 60
