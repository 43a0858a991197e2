# run 155 (session 33, ~30 s): run 154 found kernel 8's W read form (tma3d256: its 3-D tensor map, 128B swizzle, 64 x
# 64 boxes, L2 promotion 256 B) 1.7 us slower than the same bytes in the same order by 1-D bulk copies (bulkp) at
# 128 MiB, and its L2 read sectors 1.25x the bytes. Which knob: the promotion (p0: none, p128: 128 B), the swizzle
# (ns: none), or two boxes per stage (box2: one 64 x 64 x 2 box)? Prediction: the promotion (256 B over a 128-byte row
# pulls in a neighbour the box may not use); p0 or p128 level with bulkp.
#   tools/pack_bundle.sh notes/runs/r155_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run155.sh $OUT        (carry ["bundle"], timeout 200)
. bundle/plan_lib.sh; plan_init "$1" r155
for pass in 1 2; do
    for v in bulkp tma3d256 tma3d_p0 tma3d_p128 tma3d_ns tma3d_box2; do
        timeout 30 bundle/bin/probe_start $v 128 30 2>/dev/null | grep -v variant >> $O/probe_128.csv
    done
done
plan_step "probe_start 128 MiB x 2 passes"
NCU="ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum"
for v in tma3d_p0 tma3d_p128 tma3d_ns tma3d_box2; do
    timeout 60 $NCU -k regex:bulk_kernel --launch-skip 1 --launch-count 2 bundle/bin/probe_start $v 128 3 > $O/ncu_probe_$v.csv 2>&1
    plan_step "ncu probe $v rc $?"
done
