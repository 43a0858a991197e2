# run 168 (session 37, either GPU; ~420 s on an H100, ~560 s on an H200): max_dim 0's tail after the last slot.
# T, THE LAST SLOTS (notes/runs/r168_exp_last_slots.diff): the poller, once at most 4 slots are missing (one per
# lane), keeps 4 reads of each in flight, 160 cycles apart, instead of one read per round trip; mu = g * (1 / N) with
# 1 / N taken before the wait (N = 8192: the same bits as g / N). TW, THE WARM TAIL (r168_exp_warm_tail.diff): T, and
# the consumers run their GELU loop's code once dry (the first column against the CTA's own mean, nothing stored) while
# the poller waits, one copy of the loop (an opaque round index), so that its lines are in the SM's instruction caches
# when mu comes (session 24's W: ~0.3 us of the finish was instruction fetch). Floors and prediction
# (notes/18_small_m.md, "Session 37"): T finds the last slot <= ~0.5 us after its store (run 166: 0.42-0.8), max_dim
# 0's end ~0.2-0.3 us earlier at M <= 64; TW up to ~0.2 us more (mu -> end 0.38 us in run 166); level elsewhere.
# On an H200 first: main's benchmark (PN + PK) into bench_nvidia_h200.csv (run 164's first step). Then on either
# GPU: the bar rows A T TW A TW T A twice, TL3 of main, T and TW at max_dim 0 M = 8 / 64, racecheck / synccheck and
# the suites of T and TW, grid_poll's highest register (setmaxnreg.dec leaves the producer warpgroup 40); on an H100
# also bench/matrix_poller.txt A TW T A.
# BIN bench_T maxgemm_bench notes/runs/r168_exp_last_slots.diff
# BIN test_T test_maxgemm notes/runs/r168_exp_last_slots.diff
# BIN bench_TW maxgemm_bench notes/runs/r168_exp_warm_tail.diff
# BIN test_TW test_maxgemm notes/runs/r168_exp_warm_tail.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
# BIN tl3T maxgemm notes/runs/r168_exp_tl3_last_slots.diff
# BIN tl3TW maxgemm notes/runs/r168_exp_tl3_warm_tail.diff
#   tools/pack_bundle.sh notes/runs/r168_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run168.sh $OUT        (carry ["bundle"], timeout 600)
#   then here: python3 tools/ab_variants.py OUT/r168/bar_*.csv (and ab_*.csv); tools/timeline_summary.py on the tl3*
. bundle/plan_lib.sh; plan_init "$1" r168
if [ "$PLAN_GPU" = nvidia_h200 ]; then
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 200   # the compiled-in tables: the h200.csv candidate
fi
plan_abx bar bench/matrix_bar.txt A_1 T_1 TW_1 A_2 TW_2 T_2 A_3
for m in 8 64; do
    for v in tl3 tl3T tl3TW; do
        plan_cli ${v}_d0_m${m} $v 30 --kernel 8 -p bf16 -m $m -d 0 --no-shortcut --no-baseline -i 30 -w 3
    done
done
plan_step "timelines"
plan_sanitize test_T 'gpu_kernels/swapab_md0_slots' T 60 racecheck synccheck
plan_sanitize test_TW 'gpu_kernels/swapab_md0_slots' TW 60 racecheck synccheck
plan_abx bar bench/matrix_bar.txt A_4 TW_3 T_3 A_5 T_4 TW_4 A_6
for v in T TW; do
    plan_suite test_$v 'gpu_determinism/*' determinism_$v 90 --verbose
    plan_suite test_$v 'gpu_kernels/swapab_md0_slots' slots_$v 60 --verbose
    plan_suite test_$v 'gpu_kernels/swapab_grid_finish_graph' graph_$v 60 --verbose
done
for b in bench_T bench_TW maxgemm_bench; do   # grid_poll's highest register: 40 after setmaxnreg.dec
    cuobjdump -sass bundle/bin/$b 2>/dev/null | python3 -c '
import re, sys
f = None; hi = {}
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m: f = m.group(1); continue
    if f and "grid_poll" in f:
        for r in re.findall(r"\bR(\d+)\b", line): hi[f] = max(hi.get(f, 0), int(r))
for f, r in sorted(hi.items()): print(r, f)
' > $O/regs_$b.txt
done
plan_step "grid_poll registers"
if [ "$PLAN_GPU" != nvidia_h200 ]; then
plan_ab bench/matrix_poller.txt A_1 TW_1 T_1 A_2
fi
for v in T TW; do plan_suite test_$v 'gpu_kernels/swapab_*' swapab_$v 150 --verbose; done
