#!/usr/bin/env bash
# tools/ncu_mid_m.sh: what limits each kernel at mid M (issue 18 item 6): ncu (--clock-control none) of the GEMM
# kernel of one forward per case, one line each: time, DRAM / L2 / tensor-pipe throughput (% of peak), issue-slot
# use and the top warp-stall reasons (cycles per issued instruction).
#   tools/ncu_mid_m.sh BINDIR OUTFILE "KERNEL PREC MAXDIM M [maxgemm run flags...]" ...
# e.g. tools/ncu_mid_m.sh bundle/bin out.txt "8 bf16 1 300" "4 bf16 1 300" "8 bf16 1 300 --cluster 2"
# NCU_EXTRA="metric,metric": more ncu metrics, printed after the stalls as name=value (e.g. the shared-memory bank
# reads and writes, l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed).
set -u
BIN=${1:?usage: tools/ncu_mid_m.sh BINDIR OUTFILE CASE...}
OUTF=${2:?usage}
shift 2
NCU=${NCU:-ncu}
N=${N:-8192}
K=${K:-8192}
M_STALLS="long_scoreboard barrier wait math_pipe_throttle sleeping membar short_scoreboard mio_throttle lg_throttle dispatch_stall no_instruction selected"
METRICS="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_issued.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__cluster_dim_x"
for s in $M_STALLS; do METRICS="$METRICS,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
METRICS="$METRICS${NCU_EXTRA:+,$NCU_EXTRA}"
export NCU_EXTRA
: >"$OUTF"
for c in "$@"; do
  set -- $c
  kid=$1 prec=$2 md=$3 m=$4
  shift 4
  echo "== k$kid $prec md$md M=$m $*" >>"$OUTF"
  # the 2nd launch of the GEMM kernel (the first forward may include one-time work); the finalize is excluded
  re='regex:(^|::)(ws_kernel|swapab_kernel|int8_kernel|gemv_kernel)\b'
  [ "$kid" = 0 ] && re='regex:^(sm90|nvjet|cutlass|gemm)'   # cuBLAS's GEMM, not its max-reduction kernel
  timeout 120 "$NCU" --clock-control none --launch-skip 1 --launch-count 1 -k "$re" \
    --metrics "$METRICS" --csv --page raw \
    "$BIN/maxgemm" run --kernel "$kid" --precision "$prec" --max-dim "$md" -m "$m" -n "$N" -k "$K" \
    --iters 2 --warmup 0 --no-shortcut --no-baseline "$@" >"$OUTF.tmp" 2>&1
  python3 - "$OUTF.tmp" >>"$OUTF" <<'PY'
import csv, os, sys
extra = [m for m in os.environ.get("NCU_EXTRA", "").split(",") if m]
rows = [r for r in csv.reader(open(sys.argv[1], errors="replace")) if len(r) > 10]
if len(rows) < 3:
    print("  no ncu rows:", open(sys.argv[1], errors="replace").read()[-400:].replace("\n", " | "))
    sys.exit(0)
hdr = rows[0]
for r in rows[2:]:
    d = dict(zip(hdr, r))
    def g(k):
        return d.get(k, "")
    stalls = sorted(((float(v.replace(",", "")), k.split("stalled_")[1].split("_per_issue")[0])
                     for k, v in d.items() if "issue_stalled_" in k and v.replace(",", "").replace(".", "", 1).isdigit()),
                    reverse=True)[:5]
    print("  %s time_ns=%s dram%%=%s l2%%=%s tensor%%=%s issue%%=%s grid=%s cluster=%s stalls: %s%s" % (
        g("Kernel Name")[:60], g("gpu__time_duration.sum"),
        g("dram__throughput.avg.pct_of_peak_sustained_elapsed"), g("lts__t_sectors.avg.pct_of_peak_sustained_elapsed"),
        g("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"),
        g("sm__inst_issued.avg.pct_of_peak_sustained_elapsed"), g("launch__grid_size"), g("launch__cluster_dim_x"),
        " ".join("%s=%.2f" % (k, v) for v, k in stalls),
        "".join(" %s=%s" % (m.split(".")[0], g(m)) for m in extra)))
PY
done
rm -f "$OUTF.tmp"
