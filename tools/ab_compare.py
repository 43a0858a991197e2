#!/usr/bin/env python3
"""tools/ab_compare.py CSV...: the table of a tools/ab_main.sh A/B (old build against new, each row paired with
kernel 0 in its own process). Files named ab_old_* and ab_new_*; per (kernel, precision, max_dim, M, N, K) row that
ran ok in all of them: the mean x_kernel0 of each side, the change new/old - 1, and whether auto picks that kernel
there (the registry's rule: fp32 kernel 7 for M <= 8 with 16-byte rows, else 6; tf32 7 for M = 1, else 4; bf16 7 for
M <= 2, else 4). Prints a Markdown table; --limit L (default 0.015) flags auto rows slower by more than L."""
import csv, sys, collections, os, math

def auto_kernel(prec, m, k):
    es = 2 if prec == "bf16" else 4
    row16 = (k * es) % 16 == 0
    lim = {"fp32": 8, "tf32": 1, "bf16": 2}[prec]
    if m <= lim and row16:
        return 7
    return 6 if prec == "fp32" else 4

def main(argv):
    limit = 0.015
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == "--limit":
            limit = float(argv[i + 1]); i += 2; continue
        files.append(argv[i]); i += 1
    side = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in files:
        which = "old" if "ab_old" in os.path.basename(f) else "new"
        with open(f) as fh:
            for r in csv.DictReader(fh):
                # full-compute rows of an explicit kernel only: short-circuit rows and auto rows have their own keys
                if (r.get("status") != "ok" or not r.get("x_kernel0") or int(r["kernel"]) < 1
                        or r.get("shortcut", "0") != "0" or r.get("requested_kernel") == "auto"):
                    continue
                key = (int(r["kernel"]), r["precision"], int(r["max_dim"]), int(r["m"]), int(r["n"]), int(r["k"]))
                side[which][key].append(float(r["x_kernel0"]))
    keys = sorted(set(side["old"]) & set(side["new"]), key=lambda t: (t[1], t[3], t[4], t[5], t[2], t[0]))
    print("| kernel | precision | max_dim | M x N x K | auto | old x cuBLAS | new x cuBLAS | new / old |")
    print("|---|---|---|---|---|---|---|---|")
    worst = []
    logs_auto, logs_all = [], []
    for key in keys:
        kid, prec, md, m, n, k = key
        o = sum(side["old"][key]) / len(side["old"][key])
        nw = sum(side["new"][key]) / len(side["new"][key])
        ch = nw / o - 1.0
        is_auto = auto_kernel(prec, m, k) == kid
        logs_all.append(math.log(nw / o))
        if is_auto:
            logs_auto.append(math.log(nw / o))
            if ch < -limit:
                worst.append((key, ch))
        print(f"| {kid} | {prec} | {md} | {m}x{n}x{k} | {'yes' if is_auto else ''} | {o:.3f} | {nw:.3f} | {ch*100:+.1f}% |")
    if logs_auto:
        print(f"\nauto rows: {len(logs_auto)}, geomean new/old {math.exp(sum(logs_auto)/len(logs_auto)):.4f}; "
              f"all rows: {len(logs_all)}, geomean {math.exp(sum(logs_all)/len(logs_all)):.4f}")
    for key, ch in worst:
        print(f"SLOWER than {limit*100:.1f}%: {key} {ch*100:+.2f}%")
    return 1 if worst else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
