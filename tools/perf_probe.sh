#!/usr/bin/env bash
# tools/perf_probe.sh OUTDIR [steps...]: the headline-performance probe of issue 3 on the GPU host (a few minutes).
#   steps (default: info ab ncu):
#   info       nvidia-smi clocks and power
#   ab         tools/variant_ab.sh over bundle/tune (ITEMS / SPECS / ROUNDS from the environment; an item carries
#              its `maxgemm run` flags, e.g. ITEMS="k4_base k4_base:--no-pdl"; CSV=OUTDIR/ab.csv keeps the rows)
#   ncuimport  the stall reasons and per-instruction samples of full ncu reports k4_bf16.ncu-rep and k0_bf16.ncu-rep
#              in NCU_REP_DIR (default build/ncu; reports are not committed: `make ncu`, or git history, e.g.
#              `git show 5abbb6b:notes/ncu/k4_bf16.ncu-rep > build/ncu/k4_bf16.ncu-rep`, f90b1dd for k0_bf16):
#              details page and SASS source page, as CSV; a missing report is said in the summary
#   ncufull    a full Nsight Compute report of kernel 4 bf16 at the headline, max_dim 1 and 0 (NCU_BIN), with its
#              details page and per-SASS-instruction stall samples as CSV (the report itself stays under OUTDIR)
#   ncu        Nsight Compute metrics (time, SM clock, tensor pipe, shared-memory and L2 throughput) of kernel 0's and
#              kernel 4's GEMM kernels at the headline, bf16 and tf32 (NCU_BIN: the CLI to profile, default
#              bundle/tune/k4_base/maxgemm)
set -u
OUT=${1:?usage: tools/perf_probe.sh OUTDIR [steps]}
shift
STEPS=${*:-info ab ncu}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
stamp() { echo "[$SECONDS s] $*" | tee -a "$OUT/summary.txt"; }

if has info; then
    stamp info
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.applications.graphics,power.draw,power.limit,temperature.gpu \
        --format=csv >"$OUT/info.txt" 2>&1
    cat "$OUT/info.txt" >>"$OUT/summary.txt"
fi

if has ab; then
    stamp "ab ITEMS=${ITEMS:-} SPECS=${SPECS:-default}"
    (cd "$ROOT" && CSV=${CSV:-$OUT/ab.csv} tools/variant_ab.sh bundle/tune) >"$OUT/ab.txt" 2>&1
    cat "$OUT/ab.txt" >>"$OUT/summary.txt"
fi

M_LIST=gpu__time_duration.sum,smsp__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes_read.sum,sm__cycles_active.avg,sm__cycles_elapsed.max,launch__grid_size,launch__cluster_dim_x
if has ncuimport && command -v ncu >/dev/null; then
    for t in k4_bf16 k0_bf16; do
        rep="${NCU_REP_DIR:-$ROOT/build/ncu}/$t.ncu-rep"
        [ -f "$rep" ] || { stamp "ncu import $t: no $rep (see the header: make ncu, or git history)"; continue; }
        stamp "ncu import $t"
        timeout 120 ncu --import "$rep" --page details --csv >"$OUT/${t}_details.csv" 2>&1
        timeout 120 ncu --import "$rep" --page source --csv --print-source sass >"$OUT/${t}_source_sass.csv" 2>&1
        grep -i -E "stall|warp cycles per issued|issued ipc|No Eligible" "$OUT/${t}_details.csv" | head -40 >>"$OUT/summary.txt"
    done
fi

if has ncufull && command -v ncu >/dev/null; then
    B=${NCU_BIN:-$ROOT/bundle/tune/k4_base/maxgemm}
    for md in 1 0; do
        t=k4_bf16_md${md}_full
        stamp "ncu full $t"
        timeout 240 ncu --clock-control none --set full -k regex:ws_kernel --launch-skip 2 --launch-count 1 -f -o "$OUT/$t" \
            "$B" run --kernel 4 --precision bf16 --max-dim $md --iters 3 --warmup 1 --no-shortcut >"$OUT/$t.log" 2>&1
        timeout 120 ncu --import "$OUT/$t.ncu-rep" --page details --csv >"$OUT/${t}_details.csv" 2>&1
        timeout 120 ncu --import "$OUT/$t.ncu-rep" --page source --csv --print-source sass >"$OUT/${t}_source_sass.csv" 2>&1
        grep -E '"(Duration|SM Frequency|Warp Cycles Per Issued)' "$OUT/${t}_details.csv" | awk -F'","' '{ print $(NF-2), $NF }' >>"$OUT/summary.txt"
    done
fi

if has ncu && command -v ncu >/dev/null; then
    B=${NCU_BIN:-$ROOT/bundle/tune/k4_base/maxgemm}
    for prec in bf16 tf32; do
        for k in 0 4; do
            stamp "ncu k$k $prec"
            # kernel 0's GEMM is cuBLAS's (nvjet / sm90 xmma); kernel 4's is ws_kernel. Skip the fp64 reference and
            # kernel 0 runs of the kernel-4 CLI call: profile only launches whose name matches.
            if [ $k = 0 ]; then rx='regex:nvjet|sm90_xmma|gemm'; else rx='regex:ws_kernel'; fi
            timeout 180 ncu --clock-control none -k "$rx" --launch-skip 2 --launch-count 1 --csv --metrics "$M_LIST" \
                "$B" run --kernel $k --precision $prec --max-dim 1 --iters 3 --warmup 1 --no-shortcut \
                >"$OUT/ncu_k${k}_${prec}.csv" 2>&1
            grep -E '"(gpu__time|smsp__cycles_elapsed.avg.per|sm__pipe_tensor|l1tex__data_pipe|lts__t_sectors|sm__throughput|sm__cycles)' \
                "$OUT/ncu_k${k}_${prec}.csv" | awk -F'","' '{ print $(NF-2), $NF }' | tr -d '"' >>"$OUT/summary.txt"
        done
    done
fi
stamp done
