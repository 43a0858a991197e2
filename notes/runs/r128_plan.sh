# run 128 (sessions 25-26), two calls on one warm machine: which of K, H and KH wins (call "ab"), then the winner's
# tests and full benchmark (call "check V").
# K (session 25, notes/runs/r128_exp_grid_args.diff): max_dim 0's grid finish given its parameters by value. Run 127's
# stamps found 0.45-0.67 us of the last CTA's finish in grid_finish's first parameter read: a __noinline__ function
# given `const Params &` reads the fields through a generic pointer into the parameter buffer (LD.E), whose lines the
# W stream evicted from L2 (a DRAM round trip on the critical path); by value they come from the parameter constant
# bank. SASS: every one-consumer configuration (M <= 64) the same k-loop and producer, the two-consumer ones the same
# k-loop length, producer R2UR 1 -> 0.
# H (session 26, notes/runs/r128_exp_w_evict_first.diff): W's TMA loads carry an L2 evict_first policy wherever each
# W byte is loaded once (one x tile, or two with the W multicast: the plan's wfirst), so that the 134 MB stream leaves the rest of the L2 alone (the
# parameter buffer, x, the slots). The same miss K removes, from the other side; it also covers the finish paths K
# does not touch. SASS: every configuration the same k-loop; producer R2UR the same but for n8 / n16's R form
# (71 -> 85: the policy moved to a uniform register per issue). KH: both (r128_exp_grid_args_evict_first.diff).
# Y (session 26, a dispatch table: notes/runs/r128_dispatch_y.tsv, main's binary): M = 17-64 on w_rows=128,splits=1,
# the w128_n64 tile unsplit on 64 CTAs: x read once per 128 W rows (half of n32 / n64's L2 traffic) without the split
# handoff that cost run 123's X (S = 2) +1.7 to +3.2 us, but 64 SMs pulling the whole stream (128 KB of W in flight
# each, 8.4 MB in all; ~70 GB/s of W per SM).
# BIN bench_K maxgemm_bench notes/runs/r128_exp_grid_args.diff
# BIN test_K test_maxgemm notes/runs/r128_exp_grid_args.diff
# BIN tl_SK maxgemm notes/runs/r128_exp_grid_args_stamps.diff
# BIN tl_S maxgemm notes/runs/r127_exp_finish_stamps.diff
# BIN tl_SH maxgemm notes/runs/r128_exp_evict_first_stamps.diff
# BIN bench_H maxgemm_bench notes/runs/r128_exp_w_evict_first.diff
# BIN test_H test_maxgemm notes/runs/r128_exp_w_evict_first.diff
# BIN bench_KH maxgemm_bench notes/runs/r128_exp_grid_args_evict_first.diff
# BIN test_KH test_maxgemm notes/runs/r128_exp_grid_args_evict_first.diff
# Call 1, "ab" (~270 s): A/B A K H KH Y Y KH H K A over bench/matrix_ticket.txt (tools/ab_variants.py OUTDIR), then
# the per-CTA stamps (tools/timeline_summary.py; TS / TF lines: run 127's parser) of main (tl_S), H (tl_SH) and K
# (tl_SK) at bf16 max_dim 0 M = 8 (does the finish's first parameter read still miss?), and of main and H at max_dim 1
# M = 64 (do the k-loops end sooner with x's lines kept?). Call 2, "check V" (V = K, H or KH: the A/B's winner;
# ~490 s): V's GPU suites one by one (gpu_api, gpu_dispatch and gpu_shortcut first), check_model.py --quick,
# synccheck / racecheck on the slots test, V's full benchmark (the CSV that becomes bench/results/h200.csv if V is
# merged). Call 2 right after call 1, while the machine is warm (it idles out after 30 s). If no variant wins, call 2
# is still needed as `check A`: session 27 changed main's API checks (pointers, devices, overlaps), its tests
# (gpu_api, gpu_dispatch at max_dim 0, poisoned stream-K sub-batches, ...) and the Python binding (N = 0), none of
# which has run on a GPU; `check` runs check_model.py --quick against main's library for that reason. Y needs no
# call 2 of its own: main's code, its outputs checked row by row by the A/B's matrix (a table edit then needs main's
# benchmark with the edited table).
#   tools/pack_bundle.sh notes/runs/r128_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run128.sh $OUT ab            (carry ["bundle"], timeout 600)
#   tar xJf bundle/pack.tar.xz && bash bundle/run128.sh $OUT check KH      (carry ["bundle"], timeout 600)
#   ... check V notes/runs/r128_dispatch_y.tsv: V's benchmark with Y's table (if Y wins as well); check A TABLE: Y alone
mode=${2:-ab}
. bundle/plan_lib.sh; plan_init "$1" r128_$mode
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
    # Ordered (tools/plan_lib.sh plan_check) so that a call cut short (session 28 got no machine in 18 tries) still
    # returns what has never run on a GPU first: session 27's API checks (gpu_api), gpu_dispatch at max_dim 0, the
    # tail-mode rebuild (gpu_shortcut), then the binding, the rest, the sanitizers, the benchmark. Run 128 ran it with
    # 200 s per suite (gpu_kernels needed ~250 s on the H100: run 130 gives 300).
    plan_check $v ${4:-tile_configs/dispatch/h200.tsv} 200   # Y won too: notes/runs/r128_dispatch_y.tsv as TABLE
    ;;
*) echo "run128: mode ab or check V" >&2; exit 2 ;;
esac
