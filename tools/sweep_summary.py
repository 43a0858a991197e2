#!/usr/bin/env python3
"""tools/sweep_summary.py [--n N] [--k K] [CSV]: issue 18's batch sweep read from a benchmark CSV (default
bench/results/h200.csv), and its done-when items checked against it.

From the rows the benchmark ran for `auto` (requested_kernel = auto, full compute, N = K = 8192 unless --n / --k), at
the sweep's 22 batch sizes M = 1 .. 16384, it prints per precision and max_dim: how many of the 22 rows it has and
ran ok, their geomean x kernel 0 (each row's own paired ratio: kernel 0 timed interleaved with it), the lowest row
and the rows below 1.00. Then the three targets:
  - bf16 and tf32: every row >= 1.00 and the geomean >= 1.10 (each max_dim);
  - fp32 (the accurate mode, against cuBLAS SGEMM): every row >= 1.3;
  - bf16 at M <= 64: the forward within 1.15 x the W byte floor, N x K x 2 bytes at the copy rate the same CSV
    measured (ceiling_copy's gbps); each row's time and whether it is inside.
Each target line says "met" or "NOT met" and why. A row within noise of a bar is the benchmark's business (re-measure
it), not this tool's: it reads the CSV as it is.
exit 0 when the CSV could be read (whatever the targets say); 2 on usage errors, a missing file or no sweep rows."""
import csv
import math
import sys

SWEEP = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 300, 384, 512, 600, 768, 1024, 1536, 2048, 4096, 8192, 16384]
# per precision: every row's bar, the geomean's bar (None: none), the target in words (x kernel 0: cuBLAS in the same
# precision mode; SGEMM for fp32, the accurate mode)
TARGETS = {"bf16": ("1.00", "1.10", "every M >= 1.00 and geomean >= 1.10"),
           "tf32": ("1.00", "1.10", "every M >= 1.00 and geomean >= 1.10"),
           "fp32": ("1.3", None, "every M >= 1.3 x SGEMM")}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def load(path, n, k):
    """{(precision, max_dim): {m: (x_kernel0, median_us, kernel)}} of the ok auto rows, and the copy rate in GB/s."""
    rows, copy = {}, None
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("name") == "ceiling_copy" and r.get("status") == "ok" and r.get("gbps"):
                copy = float(r["gbps"])
            if (r.get("requested_kernel") != "auto" or r.get("shortcut") != "0" or r.get("status") != "ok"
                    or r.get("n") != str(n) or r.get("k") != str(k) or not r.get("x_kernel0")):
                continue
            m = int(r["m"])
            if m in SWEEP:
                rows.setdefault((r["precision"], r["max_dim"]), {})[m] = (
                    float(r["x_kernel0"]), float(r["median_ms"]) * 1e3, r["kernel"])
    return rows, copy


def main(argv):
    n, k, path, i = 8192, 8192, "bench/results/h200.csv", 0
    while i < len(argv):
        if argv[i] in ("--n", "--k") and i + 1 < len(argv):
            if argv[i] == "--n":
                n = int(argv[i + 1])
            else:
                k = int(argv[i + 1])
            i += 2
        elif argv[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        elif argv[i].startswith("-"):
            print(f"sweep_summary: unknown option {argv[i]}\n{__doc__}", file=sys.stderr)
            return 2
        else:
            path, i = argv[i], i + 1
    try:
        rows, copy = load(path, n, k)
    except OSError as e:
        print(f"sweep_summary: {path}: {e.strerror}", file=sys.stderr)
        return 2
    if not rows:
        print(f"sweep_summary: {path}: no auto rows of the M sweep at N = {n}, K = {k}", file=sys.stderr)
        return 2

    print(f"{path}: auto against kernel 0 over the M sweep (N = {n}, K = {k}; x_kernel0, paired in the same run)")
    verdicts = []
    for prec in ("bf16", "tf32", "fp32"):
        for md in ("1", "0"):
            got = rows.get((prec, md), {})
            ms = [m for m in SWEEP if m in got]
            if not ms:
                print(f"  {prec} max_dim {md}: no rows")
                verdicts.append((prec, md, None, None, []))
                continue
            g = geomean([got[m][0] for m in ms])
            lo = min(ms, key=lambda m: got[m][0])
            below = [m for m in ms if got[m][0] < 1.0]
            print(f"  {prec} max_dim {md}: {len(ms)} of {len(SWEEP)} rows, geomean {g:.3f}, lowest {got[lo][0]:.3f} "
                  f"at M = {lo} (kernel {got[lo][2]}), below 1.00: {below if below else 'none'}")
            verdicts.append((prec, md, g, got[lo][0], [m for m in SWEEP if m not in got]))

    print("targets (issue 18's done-when, on this CSV):")
    for p, md, g, lo, missing in verdicts:   # in SWEEP's precision order: bf16, tf32, then fp32
        row_bar, geo_bar, words = TARGETS[p]
        why = []
        if g is None:
            why.append("no rows")
        else:
            if lo < float(row_bar):
                why.append(f"a row at {lo:.3f} < {row_bar}")
            if geo_bar is not None and g < float(geo_bar):
                why.append(f"geomean {g:.3f} < {geo_bar}")
            if missing:
                why.append(f"rows missing or failed: M = {missing}")
        print(f"  {p} max_dim {md}: {words}: {'met' if not why else 'NOT met (' + '; '.join(why) + ')'}")
    if copy is None:
        print("  bf16 M <= 64 within 1.15 x the W byte floor: no ceiling_copy row in this CSV (no copy rate)")
        return 0
    floor_us = n * k * 2 / (copy * 1e3)
    bar = 1.15 * floor_us
    print(f"  bf16 M <= 64 within 1.15 x the W byte floor ({n} x {k} x 2 B at the copy rate {copy:.0f} GB/s: "
          f"{floor_us:.2f} us; bar {bar:.2f} us):")
    for md in ("1", "0"):
        got = rows.get(("bf16", md), {})
        small = [m for m in SWEEP if m <= 64]
        cells = [f"{m}:{got[m][1]:.1f}" if m in got else f"{m}:-" for m in small]
        over = [m for m in small if m not in got or got[m][1] > bar]
        print(f"    max_dim {md}: {' '.join(cells)} us: "
              f"{'met' if not over else 'NOT met at M = ' + ', '.join(str(m) for m in over)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
