#!/usr/bin/env python3
"""tools/span_summary.py PROBE_SPAN.CSV...: one line per probe_start variant of the CSVs its span mode writes
(tools/plan_lib.sh's plan_span: `probe_start VARIANT MIB REPS span` lines appended to probe_span.csv), in the order the
variants first appear: each event-timed median the CSV holds, then the stamped launches' span (first CTA's entry to
the last end) and tail (the last end after the last ring's end; absent before session 40's probe_start) as min, q25,
median and max, in us; for the tma3d_fin variants since session 41 also the chain after the last ring's end (the last
slot store, the first and the last poller done). Runs 183-184 (notes/runs/r183_summary.txt, r184_summary.txt) read their probes with it."""
import csv
import statistics
import sys


def quantile(xs, f):
    return xs[int(f * (len(xs) - 1))]


def summary(xs):
    if not xs:
        return "-"
    xs = sorted(xs)
    return "min %.2f q25 %.2f med %.2f max %.2f" % (xs[0], quantile(xs, 0.25), statistics.median(xs), xs[-1])


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            rows += [r for r in csv.reader(f) if r]
    order = []
    for r in rows:
        name = r[1] if r[0] == "span" else r[0]
        if name not in ("variant",) and not name.startswith("#") and name not in order:
            order.append(name)
    for v in order:
        events = [r[2] for r in rows if r[0] == v and len(r) > 2]
        spans = [float(r[3]) for r in rows if r[0] == "span" and r[1] == v and len(r) > 3]
        tails = [float(r[4]) for r in rows if r[0] == "span" and r[1] == v and len(r) > 4]
        print("%-14s event %-15s span (%d) %s | tail %s" % (v, " / ".join(events) or "-", len(spans), summary(spans),
                                                          summary(tails)))
        for i, what in ((5, "last store"), (6, "first found"), (7, "last found")):   # tma3d_fin*'s chain (session 41)
            xs = [float(r[i]) for r in rows if r[0] == "span" and r[1] == v and len(r) > i]
            if xs:
                print("%-14s   %-11s %s" % ("", what, summary(xs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
