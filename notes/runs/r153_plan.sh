# run 153 (session 33, either GPU, ~120 s): where kernel 8's bf16 M <= 64 forward loses to the bare read of W on the
# H200. Run 151 (H200): probe_start's bulk384 ring reads the 134 MB in 33.3 us event timed, kernel 8 max_dim 1 takes
# 35.5-37.2 us (bare + 2.2-3.9 us; the H100's run 140 had bare + 0.3-1.1) and max_dim 0 38.2-39.5 us. Question: is the
# difference inside the kernel (its duration from its first CTA to its last, ncu's gpu__time_duration, cold L2 by
# ncu's cache control) or around it (launch and drain, which the event pair also counts)? And, from the light
# timeline (TL3), how much of it is the spread of the k-loops' ends (run 152: M = 64 max_dim 0 ended its k-loops over
# 4 us, M = 8 over 0.4 us)?
# Prediction: duration(kernel 8 max_dim 1, M = 8) = duration(bulk384, 128 MiB) + ~1 us (its start and epilogue),
# M = 64 + ~2-3 us (the k-loops' spread), max_dim 0 + ~2 us more (the finish's tail, runs 147-152).
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r153_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run153.sh $OUT        (carry ["bundle"], timeout 300)
#   then here: the ncu CSVs (ncu_*.csv: duration, DRAM bytes and throughput) side by side; tools/timeline_summary.py
#   OUT/r153/tl3_d*_m*_r*.txt
. bundle/plan_lib.sh; plan_init "$1" r153
NCU="ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.max,sm__cycles_active.min"
for v in bulk384 flat; do
    k=bulk_kernel; [ $v = flat ] && k=stream_kernel
    timeout 60 $NCU -k regex:$k --launch-skip 1 --launch-count 3 bundle/bin/probe_start $v 128 3 > $O/ncu_probe_$v.csv 2>&1
    plan_step "ncu probe $v rc $?"
done
for m in 8 32 64; do
    for d in 1 0; do
        timeout 60 $NCU -k regex:swapab_kernel --launch-skip 1 --launch-count 3 bundle/bin/maxgemm run --kernel 8 \
            -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 4 -w 1 > $O/ncu_k8_d${d}_m$m.csv 2>&1
        plan_step "ncu kernel 8 bf16 M $m max_dim $d rc $?"
    done
done
timeout 60 bundle/bin/probe_start bulk384 128 30 > $O/probe_bulk384.csv 2>&1
for m in 8 32 64; do
    for d in 1 0; do
        for r in 1 2; do
            plan_cli tl3_d${d}_m${m}_r$r tl3 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
        done
    done
    plan_step "timelines m$m"
done
