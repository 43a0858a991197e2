#!/usr/bin/env python3
"""tools/ab_variants.py [--base A] [--split M] DIR_OR_CSV...: the table of a same-run A/B of several builds over one
matrix, as the device runs' plans write it (notes/runs/r121_summary.txt, r123_plan.sh): one CSV per pass, named
..._<VARIANT>_<PASS>.csv (ab_A_1.csv, ab_GW_2.csv, h200_r121_ab_P8_1.csv), the variants in alternating order.

Reads the rows that ran ok with a time (every requested kernel: the ticket matrices are kernel 8's auto rows; kernel
0's rows are skipped: they pair each row, they are not compared). Per row (requested kernel, precision, max_dim, M,
N, K) it takes each variant's mean median time over its passes; per variant other than the base it prints:
  - the geomean of base time / variant time (above 1: the variant is faster) per (precision, max_dim) and M range
    (M <= --split, default 64, and above), the table run 121's summary has;
  - the geomean of the variant's paired ratio to kernel 0 over the base's (x_kernel0: the same process's cuBLAS, so
    machine drift between passes cancels), the same split, as a second view;
  - per row of precision bf16 at M <= --split: each variant's time in us, for the M <= 64 bar.
A row missing from a variant's pass, or failed there, is left out of that variant's figures and counted.
exit 0; 2 on usage errors (no files, a file that is not there or not so named, no base variant's files).
  tools/ab_variants.py OUT/r123            (run 123's ab_*.csv; --base A, --split 64 are the defaults)"""
import collections
import csv
import math
import os
import re
import sys

NAME = re.compile(r"_([A-Za-z0-9]+)_(\d+)\.csv$")


def files_of(args):
    out = []
    for a in args:
        if os.path.isdir(a):
            out += [os.path.join(a, f) for f in sorted(os.listdir(a)) if NAME.search(f)]
        else:
            out.append(a)
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv):
    base, split, args = "A", 64, []
    i = 0
    while i < len(argv):
        if argv[i] == "--base" and i + 1 < len(argv):
            base, i = argv[i + 1], i + 2
        elif argv[i] == "--split" and i + 1 < len(argv):
            split, i = int(argv[i + 1]), i + 2
        elif argv[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(argv[i])
            i += 1
    files = files_of(args)
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    # times[variant][row] = [median_ms per pass]; ratio[variant][row] = [x_kernel0 per pass]
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    ratio = collections.defaultdict(lambda: collections.defaultdict(list))
    order, failed, passes = [], collections.Counter(), collections.Counter()
    for f in files:
        m = NAME.search(os.path.basename(f))
        if not m:
            print(f"ab_variants: {f}: not named ..._<VARIANT>_<PASS>.csv", file=sys.stderr)
            return 2
        if not os.path.isfile(f):
            print(f"ab_variants: {f}: no such file", file=sys.stderr)
            return 2
        v = m.group(1)
        if v not in order:
            order.append(v)
        passes[v] += 1
        with open(f) as fh:
            for r in csv.DictReader(fh):
                if r.get("kernel") == "0" or r.get("requested_kernel") == "0":
                    continue
                key = (r.get("requested_kernel") or r["kernel"], r["precision"], int(r["max_dim"]), int(r["m"]),
                       int(r["n"]), int(r["k"]))
                if r.get("status") != "ok" or not r.get("median_ms") or r.get("pass", "1") == "0":
                    failed[v] += 1
                    continue
                times[v][key].append(float(r["median_ms"]))
                if r.get("x_kernel0"):
                    ratio[v][key].append(float(r["x_kernel0"]))
    if base not in times:
        print(f"ab_variants: no files of the base variant {base} (found: {', '.join(order)})", file=sys.stderr)
        return 2
    mean = lambda xs: sum(xs) / len(xs)
    groups = sorted({(k[1], k[2]) for k in times[base]}, key=lambda g: (g[0], -g[1]))
    cols = [f"{p} md{d} {rng}" for p, d in groups for rng in (f"<={split}", f">{split}")]
    print("passes: " + ", ".join(f"{v} {passes[v]}" for v in order)
          + (f"; failed or unchecked rows: {dict(failed)}" if failed else ""))
    for title, data, inv in (("base time / variant time", times, True), ("variant x_kernel0 / base x_kernel0", ratio, False)):
        print(f"\ngeomean of {title} (above 1: the variant is faster)")
        print(f"{'':10s}" + "".join(f"{c:>17s}" for c in cols))
        for v in order:
            if v == base:
                continue
            cells, missing = [], 0
            for p, d in groups:
                for lo in (True, False):
                    xs = []
                    for key, b in data[base].items():
                        if key[1] != p or key[2] != d or (key[3] <= split) != lo:
                            continue
                        w = data[v].get(key)
                        if not w:
                            missing += 1
                            continue
                        xs.append(mean(b) / mean(w) if inv else mean(w) / mean(b))
                    cells.append(f"{geomean(xs):17.3f}" if xs else f"{'-':>17s}")
            print(f"{v:10s}" + "".join(cells) + (f"   ({missing} base rows missing here)" if missing else ""))
    print(f"\nbf16 at M <= {split}, us (mean of each variant's passes)")
    for d in (1, 0):
        keys = sorted((k for k in times[base] if k[1] == "bf16" and k[2] == d and k[3] <= split), key=lambda k: k[3])
        if not keys:
            continue
        print(f"  max_dim {d}, M = " + " ".join(str(k[3]) for k in keys))
        for v in order:
            print(f"    {v:8s}" + " ".join(f"{1000 * mean(times[v][k]):5.1f}" if times[v].get(k) else "    -"
                                        for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
