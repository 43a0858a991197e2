# run 171 (session 37, an H200 only, ~130 s; the session's last 240 s of device time): run 164's first two steps
# alone: main's benchmark (PN + PK; the compiled-in tables: h200.tsv is unchanged) into bench_nvidia_h200.csv and the
# bar rows twice. On any other GPU it runs nothing. From run 170's bundle (main's library unchanged since run 162):
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r171_plan.sh $OUT        (carry ["bundle"], timeout 200)
. bundle/plan_lib.sh; plan_init "$1" r171
if [ "$PLAN_GPU" != nvidia_h200 ]; then
    plan_step "not an H200 ($PLAN_GPU): nothing run"
    exit 0
fi
plan_bench bench_$PLAN_GPU maxgemm_bench bench/matrix.txt 150
plan_abx bar bench/matrix_bar.txt A_1 A_2
