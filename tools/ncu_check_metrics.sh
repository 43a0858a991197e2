#!/usr/bin/env bash
# tools/ncu_check_metrics.sh CSV METRICS: checks that `ncu --import REPORT --csv --page raw --metrics METRICS` (the CSV)
# has a column for every requested metric. ncu leaves out, without an error, a metric name that its version does not
# know (Hopper has no sm__pipe_tensor_op_gmma_* metric, for one), so a misspelt or wrong-version name would otherwise
# just be missing from the summary. METRICS is ncu's comma-separated list (several arguments are joined).
# Lines before the CSV header ("ID",...: ncu's ==PROF== / ==WARNING== lines, the program's own output) are skipped.
# ncu's long form (--csv without --page raw: a "Metric Name" column, one line per kernel and metric) is read too.
# Exit 0: every metric is a column and there is at least one profiled kernel row; 1: a metric is missing (each one
# named on stderr), there is no header or no kernel row; 2: usage. `make ncu` calls it; test it on a saved CSV:
#   tools/ncu_check_metrics.sh notes/ncu/k4_bf16.csv gpu__time_duration.sum,launch__grid_size
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tools/ncu_check_metrics.sh CSV METRIC[,METRIC...] [METRIC...]" >&2; exit 2; }
csv=$1
shift
[ -r "$csv" ] || { echo "ncu_check_metrics.sh: $csv: cannot read" >&2; exit 1; }
metrics=$(printf '%s,' "$@")

LC_ALL=C awk -v want="$metrics" -v csv="$csv" '
function unq(s) { sub(/^[ \t]*"/, "", s); sub(/"[ \t\r]*$/, "", s); return s }
!hdr && /^"ID",/ {
    hdr = NR
    n = split($0, H, /","/)
    for (i = 1; i <= n; i++) COL[unq(H[i])] = i
    long = ("Metric Name" in COL)          # ncu --csv without --page raw: one line per (kernel, metric)
    next
}
hdr && NR > hdr {
    n = split($0, F, /","/)
    id = unq(F[1])
    if (id !~ /^[0-9]+$/) next             # the units row (page raw) has an empty ID; program output has none
    if (!(id in IDS)) { IDS[id] = 1; rows++ }
    if (long && n >= COL["Metric Name"]) HAVE[unq(F[COL["Metric Name"]])] = 1
}
END {
    if (!hdr) {
        printf "ncu_check_metrics.sh: %s: no CSV header (a line starting \"ID\",): did ncu --import fail?\n", csv > "/dev/stderr"
        exit 1
    }
    nw = split(want, W, ",")
    bad = 0; asked = 0
    for (i = 1; i <= nw; i++) {
        m = W[i]; gsub(/[ \t]/, "", m)
        if (m == "" || m in SEEN) continue
        SEEN[m] = 1; asked++
        if (long ? !(m in HAVE) : !(m in COL)) {
            printf "ncu_check_metrics.sh: %s: metric %s is not a column: this ncu version does not know it " \
                   "(fix the name in NCU_METRICS)\n", csv, m > "/dev/stderr"
            bad++
        }
    }
    if (asked == 0) { printf "ncu_check_metrics.sh: no metric names given\n" > "/dev/stderr"; exit 2 }
    if (rows == 0)
        printf "ncu_check_metrics.sh: %s: no kernel row under the header: nothing was profiled\n", csv > "/dev/stderr"
    if (bad || rows == 0) {
        printf "ncu_check_metrics.sh: %s: FAILED (%d of %d metrics missing, %d kernel row(s))\n", csv, bad, asked,
               rows > "/dev/stderr"
        exit 1
    }
    printf "ncu_check_metrics: %s: all %d metrics present, %d kernel row(s)\n", csv, asked, rows
}' "$csv"
