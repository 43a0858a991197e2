#!/usr/bin/env bash
# tools/streamk_ab.sh BINDIR (SPECS="kernel:prec:max_dim:M ..." to choose the rows): kernel 4 and kernel 6 with the
# stream-K tail on and off (MG_WS_STREAMK=0), at the headline and small M, each run checked against the fp64
# reference and timed against kernel 0 in the same process (the CLI's "x cuBLAS"). Order alternates (on, off, off,
# on) so a drifting clock favours neither. KNOB=MG_WS_SMALL compares kernel 4's small-M tile configuration forced on
# (1) and off (0) instead (any other 0/1 switch works the same way, e.g. KNOB=MG_WS_MIXED).
# A two-item case of tools/variant_ab.sh: BINDIR/maxgemm with KNOB=1 and KNOB=0.
set -u
B=${1:?usage: tools/streamk_ab.sh BINDIR}
B=${B%/}
knob=${KNOB:-MG_WS_STREAMK}
v=$(basename "$B")
ITEMS="$v:$knob=1 $v:$knob=0" ROUNDS=2 \
SPECS=${SPECS:-"4:bf16:1:1024 4:bf16:0:1024 4:tf32:1:1024 6:fp32:1:1024 4:bf16:1:1 4:bf16:1:64 4:bf16:1:256 6:fp32:1:1 6:fp32:1:64 6:fp32:1:256 4:tf32:1:64"} \
    exec "$(dirname "$0")/variant_ab.sh" "$(dirname "$B")"
