# run 172 (prepared in session 37 for the first H200; ~480 s there; on any other GPU it runs nothing): everything the
# H200 owes issue 18 in one call, most needed first. (1) main's benchmark with the compiled-in tables into
# bench_nvidia_h200.csv: PN and PK measured on an H200 at last (the h200.csv candidate); (2) the bar rows twice; (3) TL3
# of bf16 kernel 8 at M = 8 / 32 / 64, both max_dims (does PN shrink the M = 32-64 early finishers of run 153?); (4)
# the H200's dispatch table re-tuned on main's current library as run 170 did the H100's (h200.tsv predates the
# poller, PN and PK): tf32 / bf16 and fp32 tunes, the pick on the device, the benchmark with the picked table.
# Here afterwards: sweep_summary on both CSVs; if the picked table's benchmark is the better, `make dispatch-pick
# TUNE_CSV='OUT/tune/tune.csv:tf32,bf16 OUT/tune_fp32/tune.csv:fp32'` (check its rows equal the device's), and that
# benchmark becomes bench/results/h200.csv (run 151's to h200_r151.csv); then `make plots`, README, notes.
# BIN tl3 maxgemm notes/runs/r147_exp_light_timeline.diff
#   tools/pack_bundle.sh notes/runs/r172_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run172.sh $OUT        (carry ["bundle"], timeout 600)
. bundle/plan_lib.sh; plan_init "$1" r172
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150   # the compiled-in tables (~95 s on an H100)
plan_abx bar bench/matrix_bar.txt A_1 A_2
for m in 8 32 64; do
    for d in 1 0; do
        plan_cli tl3_d${d}_m${m} tl3 30 --kernel 8 -p bf16 -m $m -d $d --no-shortcut --no-baseline -i 30 -w 3
    done
done
plan_step "timelines"
ms_tb=1,2,4,8,16,32,64,96,128,192,256,300,384,512,600,768,1024,1536,2048,4096
timeout 150 tools/tune_dispatch.sh bundle/bin $O/tune --m $ms_tb --precisions tf32,bf16 --kernels 4,7,8 \
    --variants "tiles=auto,mid,small,n192 splits=auto,1,2,4 cluster=auto,2 x_tile=auto,64,96,128 mcast=auto,x" \
    --samples 20 --prune 1.5 > $O/tune.log 2>&1
plan_step "tune tf32,bf16 rc $? rows $(wc -l < $O/tune/tune.csv 2>/dev/null)"
timeout 90 tools/tune_dispatch.sh bundle/bin $O/tune_fp32 --m $ms_tb,8192,16384 --precisions fp32 --kernels 6,7,10,11 \
    --samples 20 --prune 1.5 > $O/tune_fp32.log 2>&1
plan_step "tune fp32 rc $? rows $(wc -l < $O/tune_fp32/tune.csv 2>/dev/null)"
mkdir -p $O/picked
python3 tools/dispatch_tune.py pick $O/tune/tune.csv:tf32,bf16 $O/tune_fp32/tune.csv:fp32 \
    --registry $O/tune/registry.csv --n 8192 --k 8192 --out-dir $O/picked --command "run 172" > $O/pick.log 2>&1
plan_step "pick rc $? $(ls $O/picked)"
t=$(ls $O/picked/*.tsv 2>/dev/null | head -1)
[ -n "$t" ] && plan_bench bench_${PLAN_GPU}_picked maxgemm_bench bench/matrix.txt 130 --dispatch "$t"
