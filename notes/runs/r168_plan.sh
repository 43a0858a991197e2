# run 168 (session 37, either GPU; ~330 s on an H100, ~480 s on an H200): T, THE LAST SLOTS (notes/runs/
# r168_exp_last_slots.diff): max_dim 0's poller, once at most 4 slots are missing (one per lane), keeps 4 reads of
# each in flight, 160 cycles apart, instead of one read per round trip; mu = g * (1 / N) with 1 / N taken before the
# wait (N = 8192: the same bits as g / N). Floors and prediction (notes/18_small_m.md, "Session 37"): run 166's tail
# found the last slot 0.42-0.8 us after its store (one read at a time: a store's trip plus a half to one and a half
# round trips); with reads a quarter trip apart the slowest poller sees it <= ~0.5 us after the store, so max_dim 0's
# end moves ~0.2-0.3 us earlier at M <= 64 (bf16 and tf32), level at max_dim 1 and elsewhere.
# On an H200 first: main's benchmark (PN + PK) into bench_nvidia_h200.csv (run 164's first step). Then on either
# GPU: T's sanitizers and suites, the bar rows A T T A A T T A, TL3 of main and of T at max_dim 0 M = 8 / 64, T's
# grid_poll registers (setmaxnreg.dec gives the producer warpgroup 40); on an H100 also bench/matrix_poller.txt A T T A.
# BIN bench_T maxgemm_bench notes/runs/r168_exp_last_slots.diff
# BIN test_T test_maxgemm notes/runs/r168_exp_last_slots.diff
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
# BIN tl3T maxgemm notes/runs/r168_exp_tl3_last_slots.diff
#   tools/pack_bundle.sh notes/runs/r168_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run168.sh $OUT        (carry ["bundle"], timeout 600)
#   then here: python3 tools/ab_variants.py OUT/r168/bar_*.csv (and ab_*.csv); tools/timeline_summary.py on the tl3*
. bundle/plan_lib.sh; plan_init "$1" r168
if [ "$PLAN_GPU" = nvidia_h200 ]; then
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 200   # the compiled-in tables: the h200.csv candidate
fi
plan_sanitize test_T 'gpu_kernels/swapab_md0_slots' T 60 racecheck synccheck
plan_abx bar bench/matrix_bar.txt A_1 T_1 T_2 A_2
for m in 8 64; do
    plan_cli tl3_d0_m${m} tl3 30 --kernel 8 -p bf16 -m $m -d 0 --no-shortcut --no-baseline -i 30 -w 3
    plan_cli tl3T_d0_m${m} tl3T 30 --kernel 8 -p bf16 -m $m -d 0 --no-shortcut --no-baseline -i 30 -w 3
done
plan_step "timelines"
plan_abx bar bench/matrix_bar.txt A_3 T_3 T_4 A_4
plan_suite test_T 'gpu_kernels/swapab_*' swapab_T 150 --verbose
plan_suite test_T 'gpu_determinism/*' determinism_T 90 --verbose
plan_suite test_T 'gpu_kernels/planted_nonfinite' nonfinite_T 60 --verbose
for b in bench_T maxgemm_bench; do   # grid_poll's highest register: the producer warpgroup has 40 after setmaxnreg.dec
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
plan_ab bench/matrix_poller.txt A_1 T_1 T_2 A_2
fi
