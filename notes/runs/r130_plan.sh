# run 130 (session 29's plan for the next device session): run 128's two calls, again, on main d0c615e + (the H100's
# picked table, the cooperative stream-K launch, gpu_api's kernel 4 pass), and a tune call for the H100.
# Run 129 (H200) measured run 128's A/B: K +0.6 / +0.8% on bf16 / tf32 max_dim 0 at M <= 64, level elsewhere; H, KH,
# Y lost (notes/runs/r128_r129_summary.txt). K is merged only after its GPU suite: `check K` on an H200.
# On an H100: `check A` (the H100 table through gpu_dispatch; gpu_api's kernel 4 pass), then `tune` (its CSV ->
# `make dispatch-pick TUNE_CSV=...` here -> tile_configs/dispatch/h100_80gb_hbm3.tsv).
# BIN bench_K maxgemm_bench notes/runs/r128_exp_grid_args.diff
# BIN test_K test_maxgemm notes/runs/r128_exp_grid_args.diff
# BIN tl_SK maxgemm notes/runs/r128_exp_grid_args_stamps.diff
# BIN tl_S maxgemm notes/runs/r127_exp_finish_stamps.diff
# BIN tl_SH maxgemm notes/runs/r128_exp_evict_first_stamps.diff
# BIN bench_H maxgemm_bench notes/runs/r128_exp_w_evict_first.diff
# BIN test_H test_maxgemm notes/runs/r128_exp_w_evict_first.diff
# BIN bench_KH maxgemm_bench notes/runs/r128_exp_grid_args_evict_first.diff
# BIN test_KH test_maxgemm notes/runs/r128_exp_grid_args_evict_first.diff
#   tools/pack_bundle.sh notes/runs/r130_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run130.sh $OUT check K     (H200; carry ["bundle"], timeout 600)
#   tar xJf bundle/pack.tar.xz && bash bundle/run130.sh $OUT check A     (H100, or an H200 if K is not wanted)
#   tar xJf bundle/pack.tar.xz && bash bundle/run130.sh $OUT tune [SECONDS]   (H100; ~4 min: tf32 / bf16 920 rows,
#       fp32 242; then here: make dispatch-pick TUNE_CSV='OUT/tune/tune.csv:tf32,bf16 OUT/tune_fp32/tune.csv:fp32')
#   tar xJf bundle/pack.tar.xz && bash bundle/run130.sh $OUT ab          (the A/B again, if wanted: ~90 s)
mode=${2:-ab}
. bundle/plan_lib.sh; plan_init "$1" r130_$mode
case $mode in
ab)
    plan_table Y notes/runs/r128_dispatch_y.tsv
    plan_ab bench/matrix_ticket.txt A_1 K_1 H_1 KH_1 Y_1 Y_2 KH_2 H_2 K_2 A_2
    for t in S_d0_m8 SH_d0_m8 SK_d0_m8 S_d1_m64 SH_d1_m64; do   # tl_V_dD_mM: run 127's stamps, with H, with K
        v=${t%%_*} d=${t#*_d}; d=${d%%_*}; m=${t##*_m}
        timeout 20 bundle/bin/tl_$v run --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 8 -w 1 \
            > $O/tl_$t.txt 2>&1
        echo "timeline $t rc $? t=$(plan_el)" >> $O/steps.txt
    done
    plan_step "timelines done"
    ;;
check)
    v=${3:?check needs the variant: K, H, KH or A (main)}
    table=${4:-tile_configs/dispatch/h200.tsv}   # Y won too: notes/runs/r128_dispatch_y.tsv
    tb=test_$v bb=bench_$v
    [ $v != A ] || { tb=test_maxgemm; bb=maxgemm_bench; }
    # Ordered so that a call cut short (session 28 got no machine in 18 tries; a late one may have ~3 minutes left)
    # still returns what has never run on a GPU first: session 27's API checks (gpu_api), gpu_dispatch at max_dim 0,
    # the tail-mode rebuild (gpu_shortcut), then the binding, then every other suite, the sanitizers, the benchmark.
    # One suite per step, so each finished suite is packed; the suites are the binary's own list (none missed).
    first="gpu_api gpu_dispatch gpu_shortcut"
    rest=$(bundle/bin/$tb --list 2>/dev/null | grep -o '^gpu_[a-z0-9_]*' | grep -vxF "$(printf '%s\n' $first)")
    for s in $first; do plan_suite $tb "$s/*" ${s}_$v 90 --verbose; done
    plan_python libmaxgemm.so check_model 120 --quick   # main's library and binding (session 27's changes)
    [ -n "$rest" ] || plan_step "check: $tb --list named no other gpu_* suite"
    for s in $rest; do plan_suite $tb "$s/*" ${s}_$v 300 --verbose; done   # gpu_kernels: ~250 s on an H100 (run 128)
    plan_sanitize $tb 'gpu_kernels/swapab_md0_slots' $v 40 synccheck racecheck
    timeout 150 bundle/bin/$bb --dispatch $table --matrix bench/matrix.txt --csv $O/h200_$v.csv > $O/bench_$v.log 2>&1
    plan_step "bench $v ($table) rc $? rows $(wc -l < $O/h200_$v.csv 2>/dev/null)"
    ;;
tune)
    # The H100's dispatch table (session 29 picked a first one from run 128's benchmark): tf32 and bf16 over the sweep's
    # M up to 4096, kernels 4 7 8 with run 107's variants; then `make dispatch-pick TUNE_CSV=OUT/tune.csv` here.
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
*) echo "run130: mode ab, check V or tune" >&2; exit 2 ;;
esac
