# run 170 (session 37, either GPU, <= 470 s): the dispatch table re-tuned on main's final library (PN and PK merged
# since the H100's table was tuned in run 130, and the poller since). On an H200 the issue's measurement comes first:
# main's benchmark into bench_nvidia_h200.csv (the h200.csv candidate) and the bar rows, then the tf32 / bf16 tune. On
# an H100: run 130's tune (tf32 / bf16 kernels 4 7 8 with their variants, fp32 kernels 6 7 10 11; 20 samples, prune
# 1.5), the pick from both CSVs on the device (tools/dispatch_tune.py pick, as `make dispatch-pick` here), and main's
# benchmark with the picked table (--dispatch), beside main's compiled-in H100 table in the same benchmark's rows of
# kernel 0. Here afterwards: `make dispatch-pick TUNE_CSV='OUT/tune.csv:tf32,bf16 OUT/tune_fp32.csv:fp32'` writes the
# table to commit (it must equal the device's pick), bench/results/<gpu>_r170*.csv.
#   tools/pack_bundle.sh notes/runs/r170_plan.sh
#   tar xJf bundle/pack.tar.xz && bash bundle/run170.sh $OUT        (carry ["bundle"], timeout 470)
. bundle/plan_lib.sh; plan_init "$1" r170
ms_tb=1,2,4,8,16,32,64,96,128,192,256,300,384,512,600,768,1024,1536,2048,4096
ms_f=$ms_tb,8192,16384
tune_tb() {   # tf32 / bf16 (run 130's matrix)
    timeout "$1" tools/tune_dispatch.sh bundle/bin $O/tune --m $ms_tb --precisions tf32,bf16 --kernels 4,7,8 \
        --variants "tiles=auto,mid,small,n192 splits=auto,1,2,4 cluster=auto,2 x_tile=auto,64,96,128 mcast=auto,x" \
        --samples 20 --prune 1.5 > $O/tune.log 2>&1
    plan_step "tune tf32,bf16 rc $? rows $(wc -l < $O/tune/tune.csv 2>/dev/null)"
}
if [ "$PLAN_GPU" = nvidia_h200 ]; then
    plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 200   # the compiled-in tables
    plan_abx bar bench/matrix_bar.txt A_1 A_2
    tune_tb 220
else
    tune_tb 180
    timeout 100 tools/tune_dispatch.sh bundle/bin $O/tune_fp32 --m $ms_f --precisions fp32 --kernels 6,7,10,11 \
        --samples 20 --prune 1.5 > $O/tune_fp32.log 2>&1
    plan_step "tune fp32 rc $? rows $(wc -l < $O/tune_fp32/tune.csv 2>/dev/null)"
    mkdir -p $O/picked
    python3 tools/dispatch_tune.py pick $O/tune/tune.csv:tf32,bf16 $O/tune_fp32/tune.csv:fp32 \
        --registry $O/tune/registry.csv --n 8192 --k 8192 --out-dir $O/picked --command "run 170" > $O/pick.log 2>&1
    plan_step "pick rc $? $(ls $O/picked)"
    t=$(ls $O/picked/*.tsv 2>/dev/null | head -1)
    [ -n "$t" ] && plan_bench bench_${PLAN_GPU}_picked maxgemm_bench bench/matrix.txt 150 --dispatch "$t"
fi
