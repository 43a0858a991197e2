# run 187 (session 41; ~200 s of command on any GPU): PP, kernel 8's grid_poll pipelined as probe_start's tma3d_finp
# (notes/runs/r187_exp_pp.diff): once at most half the slots are missing and the grid has at most 128 CTAs, two sets
# of the missing slots' loads in flight 160 ns apart, each re-issued as soon as it is taken. Runs 186-186c (H100): in
# the bare ring the pipelined poll found the last slot 1.0 us after the last ring's end against 1.5 us for one REDUX
# round (kernel 8's form) and ended the launch 0.2-0.4 us earlier event-timed. Session 37's T (four reads of each of
# the last <= 4 slots) was 0.2-0.4 us slower in kernel 8; PP is finp's form, not T's. Prediction: bf16 / tf32 max_dim
# 0 at M <= 64 0.2-0.4 us faster, max_dim 1 level. Steps: PP's checks (odd shapes, both max_dims), the bar rows
# A PP PP A A PP, racecheck / synccheck on the slots test, PP's determinism and swapab suites, the k-loop SASS diff.
# BIN maxgemm_PP maxgemm notes/runs/r187_exp_pp.diff
# BIN bench_PP maxgemm_bench notes/runs/r187_exp_pp.diff
# BIN test_PP test_maxgemm notes/runs/r187_exp_pp.diff
#   tools/pack_bundle.sh notes/runs/r187_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run187.sh $OUT        (carry ["bundle"], timeout 400)
. bundle/plan_lib.sh; plan_init "$1" r187
plan_checks maxgemm_PP "1 8192 8192;8 8192 8192;64 8192 8192;3 1000 1000;5 777 129;33 8192 999;17 100 64" \
    --kernel 8 -p bf16
plan_checks maxgemm_PP "8 8192 8192;13 1000 130" --kernel 8 -p tf32
plan_abx bar bench/matrix_bar.txt A_1 PP_1 PP_2 A_2 A_3 PP_3
plan_sanitize test_PP 'gpu_kernels/swapab_md0_slots' PP 60 racecheck synccheck
plan_suite test_PP 'gpu_determinism/*' determinism_PP 90 --verbose
plan_suite test_PP 'gpu_kernels/swapab*' swapab_PP 150 --verbose
cuobjdump -sass bundle/bin/maxgemm_bench > /tmp/a.sass 2>/dev/null
cuobjdump -sass bundle/bin/bench_PP > /tmp/b.sass 2>/dev/null
python3 tools/sass_kloop_diff.py /tmp/a.sass /tmp/b.sass > "$O/kloop_diff.txt" 2>&1
plan_step "k-loop SASS A / PP: rc $? ($(grep -c ' same' "$O/kloop_diff.txt") same)"
