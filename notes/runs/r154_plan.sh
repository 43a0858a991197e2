# run 154 (session 33, either GPU, ~60 s): is kernel 8's ~2 us over the bare ring at bf16 M = 8 (run 153: ncu
# duration 33.9-34.1 us against bulk384's 32.0) its way of reading W? probe_start's new variants read the same 134 MB
# in kernel 8's order (CTA b: its 64 rows, 8 KiB, of every 1 MiB panel, two panels per 16 KiB stage): bulkp by 1-D
# bulk copies, tma3d through kernel 8's own 3-D tensor map (128B swizzle, 64 x 64 bf16 boxes), tma3d256 the same in
# kernel 8's 256-thread n8 CTA.
# Prediction: bulkp = bulk384 within 0.3 us (the HBM address hash spreads either order); tma3d + 0-0.5 us. If tma3d is
# ~2 us over bulk384, kernel 8's loss is the TMA tensor path (the fix: pre-swizzled panels read by 1-D copies); if
# level, it is in kernel 8's own pieces (x's boxes, the consumer's release, the start).
#   tools/pack_bundle.sh notes/runs/r154_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run154.sh $OUT        (carry ["bundle"], timeout 200)
. bundle/plan_lib.sh; plan_init "$1" r154
timeout 90 bundle/bin/probe_start > $O/probe_start.csv 2>&1
plan_step "probe_start rc $?"
NCU="ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum"
for v in bulk384 bulkp tma3d tma3d256; do
    timeout 60 $NCU -k regex:bulk_kernel --launch-skip 1 --launch-count 3 bundle/bin/probe_start $v 128 3 > $O/ncu_probe_$v.csv 2>&1
    plan_step "ncu probe $v rc $?"
done
timeout 60 $NCU -k regex:swapab_kernel --launch-skip 1 --launch-count 3 bundle/bin/maxgemm run --kernel 8 -p bf16 -m 8 \
    -d 1 --no-shortcut --no-baseline -i 4 -w 1 > $O/ncu_k8_d1_m8.csv 2>&1
plan_step "ncu kernel 8 bf16 M 8 max_dim 1 rc $?"
