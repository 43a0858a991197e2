#!/usr/bin/env bash
# tools/streamk_ab.sh BINDIR (SPECS="kernel:prec:max_dim:M ..." to choose the rows): kernel 4 and kernel 6 with the stream-K tail on and off (MG_WS_STREAMK=0), at the
# headline and small M, each run checked against the fp64 reference and timed against kernel 0 in the same
# process (the CLI's "x cuBLAS"). Order alternates (on, off, off, on) so a drifting clock favours neither.
# KNOB=MG_WS_SMALL compares kernel 4's small-M tile configuration forced on (1) and off (0) instead.
set -u
B=${1:?usage: tools/streamk_ab.sh BINDIR}
run() {  # label env... -- cli args
  local label=$1; shift
  local out
  out=$(env "$@" 2>&1 | tail -2 | tr '\n' ' ')
  printf '%-40s %s\n' "$label" "$(echo "$out" | grep -oE 'median [0-9.]+ ms|[0-9.]+x cuBLAS|max abs err [0-9.e+-]+|FAIL[^,]*' | tr '\n' ' ')"
}
SPECS=${SPECS:-"4:bf16:1:1024 4:bf16:0:1024 4:tf32:1:1024 6:fp32:1:1024 4:bf16:1:1 4:bf16:1:64 4:bf16:1:256 6:fp32:1:1 6:fp32:1:64 6:fp32:1:256 4:tf32:1:64"}
for spec in $SPECS; do   # kernel:precision:max_dim:M
  spec=${spec//:/ }
  set -- $spec
  args=(--kernel $1 --precision $2 --max-dim $3 --m $4 --n 8192 --k 8192 --no-shortcut --check --iters 20)
  knob=${KNOB:-MG_WS_STREAMK}
  for sk in 1 0 0 1; do
    run "k$1 $2 md$3 M=$4 $knob=$sk" $knob=$sk "$B/maxgemm" run "${args[@]}"
  done
done
