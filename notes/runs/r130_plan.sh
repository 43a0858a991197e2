# run 130 (session 29's plan for the next device session), on main after session 29 (the H100's picked table, the
# cooperative stream-K launch, gpu_api's kernel 4 pass): K's check on an H200, and main's check and a tune on an H100.
# Run 129 (H200) measured run 128's A/B: K +0.6 / +0.8% on bf16 / tf32 max_dim 0 at M <= 64, level elsewhere; H, KH
# and Y lost (notes/runs/r128_r129_summary.txt), so they are not built here. K is merged only after its GPU suite:
# `check K` on an H200. On an H100: `check A` (the H100 table through gpu_dispatch; gpu_api's kernel 4 pass), then
# `tune` (its CSVs -> `make dispatch-pick` here -> tile_configs/dispatch/h100_80gb_hbm3.tsv).
# BIN bench_K maxgemm_bench notes/runs/r128_exp_grid_args.diff
# BIN test_K test_maxgemm notes/runs/r128_exp_grid_args.diff
#   tools/pack_bundle.sh notes/runs/r130_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run130.sh $OUT check K     (H200; carry ["bundle"], timeout 600)
#   tar xJf bundle/pack.tar.xz && bash bundle/run130.sh $OUT check A     (H100, or an H200 if K is not wanted)
#   tar xJf bundle/pack.tar.xz && bash bundle/run130.sh $OUT tune [SECONDS]   (H100; ~4 min: tf32 / bf16 920 rows,
#       fp32 242; then here: make dispatch-pick TUNE_CSV='OUT/tune/tune.csv:tf32,bf16 OUT/tune_fp32/tune.csv:fp32')
mode=${2:-}
. bundle/plan_lib.sh; plan_init "$1" r130_$mode
case $mode in
check)
    # tools/plan_lib.sh plan_check; 300 s per suite (gpu_kernels needed ~250 s on the H100 in run 128)
    plan_check ${3:?check needs the variant: K or A (main)} ${4:-tile_configs/dispatch/h200.tsv} 300
    ;;
tune)
    # The H100's dispatch table (session 29 picked a first one from run 128's benchmark): tf32 and bf16 over the sweep's
    # M up to 4096, kernels 4 7 8 with run 107's variants; then `make dispatch-pick` here (the header's command).
    timeout ${3:-420} tools/tune_dispatch.sh bundle/bin $O/tune \
        --m 1,2,4,8,16,32,64,96,128,192,256,300,384,512,600,768,1024,1536,2048,4096 --precisions tf32,bf16 \
        --kernels 4,7,8 --variants "tiles=auto,mid,small,n192 splits=auto,1,2,4 cluster=auto,2 x_tile=auto,64,96,128 mcast=auto,x" \
        --samples 20 --prune 1.5 > $O/tune.log 2>&1
    plan_step "tune rc $? rows $(wc -l < $O/tune/tune.csv 2>/dev/null)"
    # fp32 (kernels 6 7 10 11, their default variants: 242 rows, ~1.5 min): the picked table took fp32 from the
    # benchmark's rows only
    timeout ${3:-420} tools/tune_dispatch.sh bundle/bin $O/tune_fp32 \
        --m 1,2,4,8,16,32,64,96,128,192,256,300,384,512,600,768,1024,1536,2048,4096,8192,16384 --precisions fp32 \
        --kernels 6,7,10,11 --samples 20 --prune 1.5 > $O/tune_fp32.log 2>&1
    plan_step "tune fp32 rc $? rows $(wc -l < $O/tune_fp32/tune.csv 2>/dev/null)"
    ;;
*) echo "run130: mode check V or tune" >&2; exit 2 ;;
esac
