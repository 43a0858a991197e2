#!/usr/bin/env bash
# tools/streamk_ab.sh BINDIR (SPECS="kernel:prec:max_dim:M ..." to choose the rows): kernel 4 and kernel 6 with the
# stream-K tail on and off (--no-streamk), at the headline and small M, each run checked against the fp64 reference
# and timed against kernel 0 in the same process (the CLI's "x cuBLAS"). Order alternates (A, B, B, A) so a drifting
# clock favours neither. Any other pair of `maxgemm run` flag sets works the same way: FLAGS_A and FLAGS_B are
# comma-separated flags (default FLAGS_A="" FLAGS_B=--no-streamk), e.g. FLAGS_A=--tiles=small FLAGS_B=--tiles=main
# compares kernel 4's small-M tile configuration with the main one, FLAGS_A=--mixed-panels=force
# FLAGS_B=--mixed-panels=off the mixed-width panels.
# A two-item case of tools/variant_ab.sh: BINDIR/maxgemm with FLAGS_A and with FLAGS_B (results read from --csv).
set -u
B=${1:?usage: tools/streamk_ab.sh BINDIR}
B=${B%/}
v=$(basename "$B")
fa=${FLAGS_A-}
fb=${FLAGS_B---no-streamk}
ITEMS="$v${fa:+:$fa} $v${fb:+:$fb}" ROUNDS=2 \
SPECS=${SPECS:-"4:bf16:1:1024 4:bf16:0:1024 4:tf32:1:1024 6:fp32:1:1024 4:bf16:1:1 4:bf16:1:64 4:bf16:1:256 6:fp32:1:1 6:fp32:1:64 6:fp32:1:256 4:tf32:1:64"} \
    exec "$(dirname "$0")/variant_ab.sh" "$(dirname "$B")"
