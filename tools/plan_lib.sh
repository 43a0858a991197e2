# tools/plan_lib.sh: the steps a device run's plan (notes/runs/rNNN_plan.sh) repeats, sourced by the plan.
#
# tools/pack_bundle.sh copies this file to bundle/plan_lib.sh; a plan starts with
#   . bundle/plan_lib.sh; plan_init "$1" r128
# and then calls the steps below. Every step appends one line to $O/steps.txt (what ran, its exit status, the
# seconds since plan_init) and packs OUTROOT/RUN.tgz again, so a call cut short by its limit or by the machine being
# taken back still returns every step that finished (the device tool returns what is under $OUT).
# Binaries are bundle/bin/NAME (main's: maxgemm, maxgemm_bench, test_maxgemm; the plan's BIN lines add the rest).
#   plan_init OUTROOT RUN               O=OUTROOT/RUN, the library path, the clock, the GPU's name/clocks/power
#   plan_step TEXT                      a line in steps.txt, then the tarball
#   plan_table V TABLE                  variant V is a dispatch table: main's maxgemm_bench (or bench_V if the
#                                       plan has one) reads TABLE instead of the compiled-in one
#   plan_ab MATRIX STEP...              A/B rounds: STEP = V_i runs bench_V (A: main's maxgemm_bench) over MATRIX
#                                       with the compiled-in dispatch table of the GPU it runs on (or V's
#                                       plan_table), into ab_STEP.csv (tools/ab_variants.py reads them)
#   plan_abx PREFIX MATRIX STEP...      plan_ab's rounds into PREFIX_STEP.csv (e.g. bar_A_1, bar_O_1 over
#                                       bench/matrix_bar.txt beside a plan's ab_*.csv)
#   plan_bench STEP BIN MATRIX SECONDS [ARGS]  bundle/bin/BIN (a maxgemm_bench) over MATRIX with ARGS into STEP.csv
#                                       and STEP.log, one step with the CSV's line count (plan_ab's rounds, the
#                                       plans' own A/Bs, the benchmark: plan_bench bench_$PLAN_GPU maxgemm_bench
#                                       bench/matrix.txt 200)
#   plan_cli TAG BIN SECONDS [ARGS]     bundle/bin/BIN (a maxgemm CLI) `run ARGS` into TAG.txt, and TAG with the
#                                       run's median into medians.txt (no step: a plan steps after a group)
#   plan_suite BIN FILTER TAG SECONDS [ARGS]   Criterion suites (--jobs 1) matching FILTER into TAG.log
#   plan_sanitize BIN FILTER TAG SECONDS TOOL...  compute-sanitizer TOOL (error exit 99) on BIN's FILTER tests,
#                                       into TOOL_TAG.log, one step per tool
#   plan_ncu TAG SECONDS METRICS KREGEX COUNT CMD...  ncu (--clock-control none, CSV) of COUNT launches of the
#                                       kernels matching regex KREGEX, after one skipped (its first, cold code), while
#                                       CMD runs (bundle/bin/...), into ncu_TAG.csv, one step (runs 153-155's form)
#   plan_python LIB TAG SECONDS [ARGS]  python/check_model.py (the source tree's maxgemm_torch) against bundle/bin/LIB
#                                       (libmaxgemm.so: main's), into TAG.log and TAG.json
#   plan_check V TABLE SECONDS          variant V's (A: main's) whole check, one step each: gpu_api, gpu_dispatch and
#                                       gpu_shortcut, check_model.py --quick, every other gpu_* suite of test_V's
#                                       own --list (SECONDS each), synccheck / racecheck on the slots test, and
#                                       bench_V over bench/matrix.txt with dispatch TABLE into GPU_V.csv and .log
#                                       (GPU: PLAN_GPU, the name plan_init read, e.g. nvidia_h200_K.csv)
#   plan_tl3 BIN "MS" "DIMS"            kernel 8's light timeline (a BIN built with r147_exp_light_timeline.diff or
#                                       a variant of it) of bf16 at each M of MS and max_dim of DIMS, into
#                                       BIN_dD_mM.txt (tools/timeline_summary.py reads them), then one step
#   plan_span VARIANT...                 tools/probe_start's span mode (20 cold launches of VARIANT at 128 MiB, first
#                                       CTA's entry to last consumer's end, and the tail after the last ring's end)
#                                       into probe_span.csv (tools/span_summary.py reads it), then one step with
#                                       this call's launches and the variants whose run failed. PROBE=BIN runs a
#                                       variant's probe_start instead (a BIN line with target probe_start) into
#                                       probe_span_BIN.csv
#   plan_clock TAG CMD...               plan_ncu of kernel 8 (4 launches after 1): duration, SM clock, DRAM % of peak
#                                       (session 39's tensor-clock question), into ncu_TAG.csv
#   plan_checks BIN "M N K;M N K..." ARGS...  BIN (a maxgemm CLI) `run -m M -n N -k K -d D ARGS --no-shortcut
#                                       --check` at each shape (';' between shapes) and both max_dims, "BIN shape
#                                       PASS / FAIL" per line into checks.txt, one step counting this call's lines
#   plan_retune TB_SECS FP32_SECS BENCH_SECS  the GPU's dispatch table re-tuned (run 130's tune: tf32 / bf16 kernels
#                                       4 7 8 with their variants, fp32 kernels 6 7 10 11) into tune/ and tune_fp32/,
#                                       picked from both into picked/, and main's benchmark with the picked table
#                                       into bench_GPU_picked.csv (here: `make dispatch-pick TUNE_CSV='OUT/tune/tune.csv:
#                                       tf32,bf16 OUT/tune_fp32/tune.csv:fp32'` writes the same rows)
#   plan_require_gpu NAME               a plan for one GPU kind only (NAME as PLAN_GPU spells it, e.g. nvidia_h200):
#                                       on any other GPU one step "not NAME (PLAN_GPU): nothing run" and exit 0
#   plan_finish_check V SECS            variant V's check of a change to kernel 8's finish (runs 187 / 191 / 193):
#                                       racecheck / synccheck on the slots test, determinism, kernel 8's suites, the
#                                       generic suites that plant non-finite values or read partial maxima (SECS
#                                       each, kernel 8's twice), and the k-loops' SASS of main against bench_V
# The plan runs in the repository root of the device's copy (bash bundle/runNNN.sh $OUT).

plan_init() {
    PLAN_ROOT=$1
    PLAN_RUN=$2
    O=$PLAN_ROOT/$PLAN_RUN
    mkdir -p "$O"
    export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
    PLAN_T0=$(date +%s)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
        > "$O/gpu.txt" 2>&1
    # the GPU's name as a file-name word (nvidia_h200, nvidia_h100_80gb_hbm3): the device lends either kind, so the
    # benchmark CSVs are named by the GPU that ran them
    PLAN_GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z_')
    PLAN_GPU=${PLAN_GPU:-nogpu}
}

plan_el() { echo $(( $(date +%s) - PLAN_T0 )); }

plan_step() {
    echo "$1 t=$(plan_el)" >> "$O/steps.txt"
    tar czf "$PLAN_ROOT/$PLAN_RUN.tgz" -C "$PLAN_ROOT" "$PLAN_RUN"
}

declare -gA PLAN_TABLE
plan_table() { PLAN_TABLE[$1]=$2; }

plan_ab() { plan_abx ab "$@"; }

plan_abx() {
    local prefix=$1 matrix=$2 step v bin
    shift 2
    for step in "$@"; do
        v=${step%_*}
        bin=bundle/bin/maxgemm_bench
        [ "$v" = A ] || [ ! -x "bundle/bin/bench_$v" ] || bin=bundle/bin/bench_$v
        [ "$v" = A ] || [ -x "bundle/bin/bench_$v" ] || [ -n "${PLAN_TABLE[$v]:-}" ] ||
            { echo "$prefix $step: no bundle/bin/bench_$v and no plan_table $v" >> "$O/steps.txt"; continue; }
        if [ -n "${PLAN_TABLE[$v]:-}" ]; then
            plan_bench "${prefix}_$step" "${bin#bundle/bin/}" "$matrix" 60 --dispatch "${PLAN_TABLE[$v]}"
        else
            plan_bench "${prefix}_$step" "${bin#bundle/bin/}" "$matrix" 60
        fi
    done
}

plan_bench() {
    local step=$1 bin=$2 matrix=$3 secs=$4
    shift 4
    local rc
    timeout "$secs" "bundle/bin/$bin" --matrix "$matrix" --csv "$O/$step.csv" "$@" > "$O/$step.log" 2>&1
    rc=$?
    plan_step "$step ($bin $matrix $*) rc $rc rows $(wc -l 2>/dev/null < "$O/$step.csv")"
}

plan_cli() {
    local tag=$1 bin=$2 secs=$3
    shift 3
    timeout "$secs" "bundle/bin/$bin" run "$@" > "$O/$tag.txt" 2>&1
    echo "$tag $(grep -o 'median [0-9.]* ms' "$O/$tag.txt")" >> "$O/medians.txt"
}

plan_suite() {
    local bin=$1 filter=$2 tag=$3 secs=$4 rc
    shift 4
    timeout "$secs" "bundle/bin/$bin" --jobs 1 "$@" --filter "$filter" > "$O/$tag.log" 2>&1
    rc=$?
    plan_step "$tag ($bin '$filter') rc $rc"
}

plan_ncu() {
    local tag=$1 secs=$2 metrics=$3 k=$4 count=$5 ncu rc
    shift 5
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    timeout "$secs" "$ncu" --clock-control none --csv --metrics "$metrics" -k "regex:$k" --launch-skip 1 \
        --launch-count "$count" "$@" > "$O/ncu_$tag.csv" 2>&1
    rc=$?
    plan_step "ncu $tag ($k x $count: $*) rc $rc"
}

plan_python() {
    local lib=$1 tag=$2 secs=$3 rc
    shift 3
    MAXGEMM_LIB=$PWD/bundle/bin/$lib PYTHONUNBUFFERED=1 timeout "$secs" python3 python/check_model.py "$@" \
        --out-json "$O/$tag.json" > "$O/$tag.log" 2>&1
    rc=$?
    plan_step "$tag (check_model.py $* against $lib) rc $rc"
}

plan_sanitize() {
    local bin=$1 filter=$2 tag=$3 secs=$4 tool san rc
    shift 4
    san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    for tool in "$@"; do
        timeout "$secs" "$san" --tool "$tool" --target-processes all --error-exitcode 99 "bundle/bin/$bin" --jobs 1 \
            --filter "$filter" > "$O/${tool}_$tag.log" 2>&1
        rc=$?
        plan_step "$tool $tag ($bin '$filter') rc $rc"
    done
}

# The suites that guard the public API, the dispatch table and the short-circuit, which a check runs first; and
# every other gpu_* suite of test binary BIN's own --list (none missed).
PLAN_FIRST_SUITES="gpu_api gpu_dispatch gpu_shortcut"
plan_other_suites() {
    "bundle/bin/$1" --list 2>/dev/null | grep -o '^gpu_[a-z0-9_]*' | grep -vxF "$(printf '%s\n' $PLAN_FIRST_SUITES)"
}

plan_check() {
    local v=$1 table=$2 secs=$3 tb=test_$1 bb=bench_$1 first rest s
    [ "$v" != A ] || { tb=test_maxgemm; bb=maxgemm_bench; }
    # Ordered so that a call cut short (a machine lent late may leave ~3 minutes) still returns the suites that guard
    # the public API, the dispatch table and the short-circuit first, then the binding, then every other suite, the
    # sanitizers, the benchmark. One suite per step, so each finished suite is packed; the suites are the binary's own
    # list (none missed).
    first=$PLAN_FIRST_SUITES
    rest=$(plan_other_suites $tb)
    for s in $first; do plan_suite $tb "$s/*" ${s}_$v 90 --verbose; done
    plan_python libmaxgemm.so check_model 120 --quick   # main's library and binding
    [ -n "$rest" ] || plan_step "check: $tb --list named no other gpu_* suite"
    for s in $rest; do plan_suite $tb "$s/*" ${s}_$v "$secs" --verbose; done
    plan_sanitize $tb 'gpu_kernels/swapab_md0_slots' $v 40 synccheck racecheck
    plan_bench ${PLAN_GPU}_$v $bb bench/matrix.txt 150 --dispatch "$table"
}

plan_tl3() {
    local bin=$1 m d
    for m in $2; do
        for d in $3; do
            plan_cli "${bin}_d${d}_m${m}" "$bin" 30 --kernel 8 -p bf16 -m "$m" -d "$d" --no-shortcut --no-baseline \
                -i 30 -w 3
        done
    done
    plan_step "timelines ($bin)"
}

plan_span() {
    local v before failed="" bin=${PROBE:-bundle/bin/probe_start} csv=$O/probe_span.csv
    [ -z "${PROBE:-}" ] || csv=$O/probe_span_$(basename "$PROBE").csv
    before=$(grep -c '^span,' "$csv" 2>/dev/null)
    for v in "$@"; do
        timeout 60 "$bin" "$v" 128 20 span >> "$csv" 2>> "$O/probe_span.log" ||
            failed="$failed $v"
    done
    # this call's launches only (the CSV is shared by a plan's calls), and the variants whose run failed
    # (a tma3d_fin* output check included: probe_span.log says why)
    plan_step "probe_start span ($bin: $*): $(( $(grep -c '^span,' "$csv") - ${before:-0} )) launches; failed:${failed:- none}"
}

plan_clock() {
    local tag=$1
    shift
    plan_ncu "$tag" 90 gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed \
        swapab 4 "$@"
}

plan_checks() {
    local bin=$1 shapes=$2 m n k d tag line pass=0 fail=0
    shift 2
    while read -r m n k; do
        [ -n "$m" ] || continue
        for d in 1 0; do
            tag=check_m${m}_n${n}_k${k}_d$d
            plan_cli "$tag" "$bin" 60 -m "$m" -n "$n" -k "$k" -d "$d" "$@" --no-shortcut --check -i 3 -w 1
            line="m${m}_n${n}_k${k}_d$d $(grep -o 'PASS\|FAIL' "$O/$tag.txt" | head -1)"
            echo "$bin $line" >> "$O/checks.txt"
            case $line in *PASS) pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac   # no verdict is a failure
        done
    done <<< "$(echo "$shapes" | tr ';' '\n')"
    plan_step "checks ($bin $*): $pass PASS, $fail FAIL or no verdict (this call's shapes only)"
}

plan_retune() {
    local ms=1,2,4,8,16,32,64,96,128,192,256,300,384,512,600,768,1024,1536,2048,4096 t
    timeout "$1" tools/tune_dispatch.sh bundle/bin "$O/tune" --m "$ms" --precisions tf32,bf16 --kernels 4,7,8 \
        --variants "tiles=auto,mid,small,n192 splits=auto,1,2,4 cluster=auto,2 x_tile=auto,64,96,128 mcast=auto,x" \
        --samples 20 --prune 1.5 > "$O/tune.log" 2>&1
    plan_step "tune tf32,bf16 rc $? rows $(wc -l < "$O/tune/tune.csv" 2>/dev/null)"
    timeout "$2" tools/tune_dispatch.sh bundle/bin "$O/tune_fp32" --m "$ms,8192,16384" --precisions fp32 \
        --kernels 6,7,10,11 --samples 20 --prune 1.5 > "$O/tune_fp32.log" 2>&1
    plan_step "tune fp32 rc $? rows $(wc -l < "$O/tune_fp32/tune.csv" 2>/dev/null)"
    mkdir -p "$O/picked"
    python3 tools/dispatch_tune.py pick "$O/tune/tune.csv:tf32,bf16" "$O/tune_fp32/tune.csv:fp32" \
        --registry "$O/tune/registry.csv" --n 8192 --k 8192 --out-dir "$O/picked" --command "$PLAN_RUN" \
        > "$O/pick.log" 2>&1
    plan_step "pick rc $? $(cd "$O/picked" && echo *.tsv)"
    for t in "$O"/picked/*.tsv; do
        [ -f "$t" ] && plan_bench "bench_${PLAN_GPU}_picked" maxgemm_bench bench/matrix.txt "$3" --dispatch "$t"
        break
    done
}

plan_require_gpu() {
    if [ "$PLAN_GPU" != "$1" ]; then
        plan_step "not $1 ($PLAN_GPU): nothing run"
        exit 0
    fi
}

plan_finish_check() {
    local v=$1 secs=$2 s
    plan_sanitize "test_$v" 'gpu_kernels/swapab_md0_slots' "$v" "$secs" racecheck synccheck
    plan_suite "test_$v" 'gpu_determinism/*' "determinism_$v" "$secs" --verbose
    plan_suite "test_$v" 'gpu_kernels/swapab*' "swapab_$v" $((2 * secs)) --verbose
    for s in planted_nonfinite partial_maxima random_inputs; do
        plan_suite "test_$v" "gpu_kernels/$s" "${s%%_*}_$v" "$secs" --verbose
    done
    cuobjdump -sass bundle/bin/maxgemm_bench > /tmp/a.sass 2>/dev/null
    cuobjdump -sass "bundle/bin/bench_$v" > /tmp/b.sass 2>/dev/null
    python3 tools/sass_kloop_diff.py /tmp/a.sass /tmp/b.sass > "$O/kloop_diff.txt" 2>&1
    plan_step "k-loop SASS A / $v: rc $? ($(grep -c '^same' "$O/kloop_diff.txt") same of $(grep -c . "$O/kloop_diff.txt") lines)"
}
