#!/usr/bin/env python3
"""dispatch_tune.py: the measured dispatch table's two CPU steps (notes/dispatch.md, tile_configs/README.md).

  dispatch_tune.py matrix --registry REG.csv [--n N --k K --m LIST --precisions LIST --max-dims LIST
                          --variants "KEY=V1,V2 ..." --kernels IDS --samples S] -o MATRIX
      writes the benchmark matrix (bench/matrix.txt grammar) that sweeps every candidate kernel x every option
      variant per (precision, max_dim, M), each row paired with kernel 0 by maxgemm_bench. REG.csv is
      `maxgemm list --csv`: the candidates are the built kernels that are not baselines (auto_rank is the registry's
      rule for GPUs without a table, not a say in the tune). --prune X (default 2): a row whose first timed forward
      is more than X times slower than kernel 0's is recorded as skipped without its samples.

  dispatch_tune.py pick CSV[:PRECS] [CSV[:PRECS] ...] [--registry REG.csv] [--n N --k K] [--gpu NAME]
                        (-o TABLE | --out-dir DIR)
      reads maxgemm_bench CSVs (columns by NAME, never printed text; CSV:fp32 or CSV:tf32,bf16 takes only those
      precisions' rows from that file, e.g. a fresh tf32/bf16 tune beside older fp32 runs, so that rows measured
      with an older build do not average into the fresh ones) and writes the dispatch table: per (precision,
      max_dim, M) at N x K, the candidate (kernel, options) with the highest x_kernel0 (its paired ratio to kernel 0;
      a candidate measured more than once: the geometric mean), then adjacent M with the same winner merged into
      buckets m_lo..m_hi (each measured M covers the batch sizes above the previous measured M; the last bucket ends
      at the largest M measured). The header records the GPU, driver, CUDA, cuBLAS, commit and date from the CSV.

Candidates in pick: status ok, check passed, short-circuit off, a kernel other than 0 (the reference) and, with
--registry, not a baseline. A row of requested_kernel 'auto' counts as the kernel it ran with the
options it recorded, unless its `dispatch` column names a dispatch-table row (auto then followed a table, and the
recorded options are not all it ran with). Exit status: 0, 1 on bad input (message on stderr), 2 usage.
"""
import argparse
import csv
import math
import os
import re
import shlex
import sys
from collections import OrderedDict, defaultdict

SWEEP_M = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 300, 384, 512, 600, 768, 1024, 1536, 2048, 4096, 8192, 16384]
# The option variants the default sweep tries (src/optkeys.h); maxgemm_bench leaves out every variant whose launch
# plan equals an earlier one's, so a kernel that ignores an option is timed once.
# (maxgemm_bench takes at most 256 combinations: this set is 4 x 2 x 4 x 4 x 2 = 256, the keys the committed table's
# rows use (notes/dispatch.md "Session 13"); kernel 4's `main` tiles are its auto at large M)
DEFAULT_VARIANTS = "tiles=auto,mid,small,n192 streamk=auto,off splits=auto,1,2,4 x_tile=auto,64,96,128 cluster=auto,2"
# The option keys in the order src/optkeys.c lists them (a key not listed here sorts after them, by name).
KEY_ORDER = ["tiles", "streamk", "mixed_panels", "rem_split", "splits", "x_tile", "cluster", "fuse", "mcast", "w_rows"]
# The option columns of CSVs older than the `options` column.
OPTION_COLUMNS = ["tiles", "streamk", "mixed_panels", "rem_split"]
PRECISIONS = ["fp32", "tf32", "bf16"]


class Bad(Exception):
    pass


def ints(text, what):
    try:
        vals = [int(v) for v in text.split(",") if v.strip() != ""]
    except ValueError:
        raise Bad("%s: '%s' is not a comma-separated list of integers" % (what, text))
    if not vals:
        raise Bad("%s: empty" % what)
    return vals


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows


def registry(path):
    """id -> row of `maxgemm list --csv`."""
    reg = {}
    for r in read_csv(path):
        for col in ("id", "name", "precisions", "built", "baseline", "auto_rank"):
            if col not in r:
                raise Bad("%s: no column '%s' (expected `maxgemm list --csv` output)" % (path, col))
        reg[int(r["id"])] = r
    return reg


def candidate_ids(reg):
    return sorted(i for i, r in reg.items() if r["built"] == "1" and r["baseline"] == "0")


# ---------------------------------------------------------------------------------------------------------- matrix

def cmd_matrix(a):
    reg = registry(a.registry)
    ids = ints(a.kernels, "--kernels") if a.kernels else candidate_ids(reg)
    if not ids:
        raise Bad("no candidate kernel in %s (built, not a baseline)" % a.registry)
    for i in ids:
        if i not in reg:
            raise Bad("--kernels: kernel %d is not in %s" % (i, a.registry))
        if i == 0:
            raise Bad("--kernels: kernel 0 is the reference every row is paired with, not a candidate")
    ms = ints(a.m, "--m")
    precs = [p for p in a.precisions.split(",") if p]
    for p in precs:
        if p not in PRECISIONS:
            raise Bad("--precisions: unknown precision '%s'" % p)
    mds = ints(a.max_dims, "--max-dims")
    names = ", ".join("%d %s" % (i, reg[i]["name"]) for i in ids)
    out = [
        "# GENERATED by tools/dispatch_tune.py matrix (make tune-dispatch; notes/dispatch.md): the dispatch table's",
        "# sweep. Every candidate kernel (%s) x every option variant, per precision, max_dim and M at" % names,
        "# N = %d, K = %d; maxgemm_bench pairs each row with kernel 0 and leaves out the variants whose launch plan" % (a.n, a.k),
        "# is the same as an earlier one's. Command: %s" % " ".join(shlex.quote(x) for x in sys.argv),
        "samples        %d" % a.samples,
        "quick_samples  5",
        "warmup         3",
        "seed           42",
        "kernels        %s" % " ".join(str(i) for i in ids),
        "precisions     %s" % " ".join(precs),
        "max_dims       %s" % " ".join(str(d) for d in mds),
    ]
    if a.prune > 0:
        out.append("prune          %g" % a.prune)
    if a.variants.strip():
        out.append("variants       %s" % a.variants.strip())
    out += ["shape  %5d %d %d" % (m, a.n, a.k) for m in ms]
    text = "\n".join(out) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)
        print("dispatch_tune: %s: %d kernels x %d precisions x %d max_dims x %d M, variants '%s'"
              % (a.output, len(ids), len(precs), len(mds), len(ms), a.variants.strip()), file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------------------------------------- pick

def canon_options(text):
    """'tiles=main;streamk=off' (the CSV's ';') or 'auto' -> the table's 'tiles=main,streamk=off' / 'auto'."""
    text = (text or "").strip().replace(";", ",")
    if text in ("", "auto"):
        return "auto"
    items = {}
    for item in text.split(","):
        if "=" not in item:
            raise Bad("options '%s': an item is not KEY=VALUE" % text)
        k, v = item.split("=", 1)
        if v != "auto":
            items[k] = v
    if not items:
        return "auto"
    order = lambda k: (KEY_ORDER.index(k), k) if k in KEY_ORDER else (len(KEY_ORDER), k)
    return ",".join("%s=%s" % (k, items[k]) for k in sorted(items, key=order))


def row_options(r):
    if r.get("options") not in (None, ""):
        return canon_options(r["options"])
    return canon_options(",".join("%s=%s" % (c, r[c]) for c in OPTION_COLUMNS if r.get(c) not in (None, "")))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def fmt_ratio(lo, hi):
    return "%.3f" % lo if "%.3f" % lo == "%.3f" % hi else "%.3f..%.3f" % (lo, hi)


def slug(gpu):
    s = re.sub(r"^nvidia\s+", "", gpu.strip(), flags=re.I).lower()
    s = re.sub(r"[^a-z0-9]+", "_", s).strip("_")
    return s or "gpu"


def distinct(rows, col):
    seen = OrderedDict()
    for r in rows:
        v = (r.get(col) or "").strip()
        if v:
            seen[v] = 1
    return list(seen)


def pick(rows, n, k, reg=None, gpu=None, margin=0.02):
    """-> (gpu, used rows, {(prec, md): [(m, kernel name, options, ratio)]}) from benchmark rows."""
    need = ["kernel", "name", "precision", "max_dim", "m", "n", "k", "shortcut", "x_kernel0", "pass", "status", "gpu",
            "requested_kernel"]
    if rows:
        missing = [c for c in need if c not in rows[0]]
        if missing:
            raise Bad("no column %s (a maxgemm_bench CSV?)" % ", ".join("'%s'" % c for c in missing))
    gpus = distinct(rows, "gpu")
    if gpu is None:
        if len(gpus) > 1:
            raise Bad("rows from %d GPUs (%s): one table per GPU, choose with --gpu" % (len(gpus), ", ".join(gpus)))
        gpu = gpus[0] if gpus else None
    if not gpu:
        raise Bad("no row names a GPU")
    cands = defaultdict(lambda: defaultdict(list))   # (prec, md, m) -> (kernel id, name, options) -> [ratio]
    used = []
    for r in rows:
        if r["gpu"] != gpu or r["status"] != "ok" or r["pass"] != "1" or r["shortcut"] != "0":
            continue
        if r["requested_kernel"] == "" or r["kernel"] in ("", "-1"):
            continue
        kid = int(r["kernel"])
        if kid == 0 or int(r["n"]) != n or int(r["k"]) != k:
            continue
        if reg is not None and (kid not in reg or reg[kid]["baseline"] != "0"):
            continue
        if r["requested_kernel"] == "auto" and (r.get("dispatch") or "").strip():
            continue
        try:
            x = float(r["x_kernel0"])
        except ValueError:
            continue
        if not (x > 0 and math.isfinite(x)):
            continue
        prec, md, m = r["precision"], int(r["max_dim"]), int(r["m"])
        cands[(prec, md, m)][(kid, r["name"], row_options(r))].append(x)
        used.append(r)
    winners = defaultdict(list)
    for (prec, md, m), c in cands.items():
        scored = [(geomean(xs), key) for key, xs in c.items()]
        # the highest ratio; ties: the lower kernel id, then options 'auto', then by text
        scored.sort(key=lambda t: (-t[0], t[1][0], t[1][2] != "auto", t[1][2]))
        # A kernel's own policy (options 'auto') keeps a bucket unless an option variant beats it by more than the
        # margin: paired ratios from different runs move by 1-2%, and an option switched on by noise is a row that
        # nobody can explain.
        best = scored[0][0]
        plain = [t for t in scored if t[1][2] == "auto" and t[0] * (1.0 + margin) >= best]
        ratio, (kid, name, opts) = plain[0] if plain else scored[0]
        winners[(prec, md)].append((m, name, opts, ratio))
    for key in winners:
        winners[key].sort()
    return gpu, used, winners


def buckets(points):
    """[(m, kernel, options, ratio)] sorted by m -> [(m_lo, m_hi, kernel, options, [(m, ratio)])]."""
    out = []
    prev_m = 0
    for m, name, opts, ratio in points:
        if out and out[-1][2] == name and out[-1][3] == opts:
            lo, _, _, _, pts = out[-1]
            out[-1] = (lo, m, name, opts, pts + [(m, ratio)])
        else:
            out.append((prev_m + 1, m, name, opts, [(m, ratio)]))
        prev_m = m
    return out


def table_text(gpu, used, winners, n, k, sources, command):
    def one(col):
        v = distinct(used, col)
        return ", ".join(v) if v else "unknown"
    lines = [
        "# maxgemm dispatch table: the kernel and launch options `auto` runs on this GPU, per precision, max_dim and",
        "# batch size M (format: tile_configs/README.md; how to re-tune: notes/dispatch.md). GENERATED by",
        "# tools/dispatch_tune.py pick from the benchmark CSV below; edit by hand only with a measurement to show.",
        "# measured on: %s" % gpu,
        "# driver:      %s" % one("driver"),
        "# cuda:        %s (cuBLAS %s)" % (one("cuda"), one("cublas")),
        "# commit:      %s" % one("commit"),
        "# date:        %s" % one("date"),
        "# source:      %s (N = %d, K = %d; %d candidate rows)" % (", ".join(sources), n, k, len(used)),
        "# command:     %s" % command,
        "# x_kernel0 is the winner's paired ratio to kernel 0 at the bucket's measured M (LO..HI over them); n and k",
        "# are the shape it was measured at. Both are for reading: auto looks rows up by precision, max_dim and M.",
        "gpu\t%s" % gpu,
        "",
        "# precision\tmax_dim\tm_lo\tm_hi\tkernel\toptions\tx_kernel0\tn\tk",
    ]
    for prec in PRECISIONS:
        for md in (1, 0):
            pts = winners.get((prec, md))
            if not pts:
                continue
            for lo, hi, name, opts, mr in buckets(pts):
                rs = [x for _, x in mr]
                measured = " ".join("%d:%.3f" % (m, x) for m, x in mr)
                lines.append("%s\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t# M %s" % (
                    prec, md, lo, hi, name, opts, fmt_ratio(min(rs), max(rs)), n, k, measured))
    return "\n".join(lines) + "\n"


def csv_source(arg):
    """'FILE' or 'FILE:PREC[,PREC...]' -> (FILE, set of precisions or None for all)."""
    path, sep, tail = arg.rpartition(":")
    if sep and tail and all(x in PRECISIONS for x in tail.split(",")):
        return path, set(tail.split(","))
    return arg, None


def cmd_pick(a):
    rows = []
    for p in a.csv:
        path, precs = csv_source(p)
        rows += [r for r in read_csv(path) if precs is None or r.get("precision") in precs]
    reg = registry(a.registry) if a.registry else None
    if reg is None:
        print("dispatch_tune: no --registry: every kernel but 0 is a candidate (baselines included)", file=sys.stderr)
    gpu, used, winners = pick(rows, a.n, a.k, reg, a.gpu, a.margin)
    if not winners:
        raise Bad("no candidate row at N = %d, K = %d for %s (status ok, pass 1, shortcut 0, kernel > 0)"
                  % (a.n, a.k, gpu))
    args = list(sys.argv)
    if "--command" in args:   # recorded separately
        i = args.index("--command")
        del args[i:i + 2]
    args = [x for x in args if not x.startswith("--command=")]
    argv = " ".join(shlex.quote(x) for x in args)
    command = "%s (runs: %s)" % (a.command, argv) if a.command else argv
    text = table_text(gpu, used, winners, a.n, a.k, a.csv, command)
    out = a.output or os.path.join(a.out_dir, slug(gpu) + ".tsv")
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w") as f:
            f.write(text)
        nb = sum(len(buckets(v)) for v in winners.values())
        print("dispatch_tune: %s: %s, %d rows from %d measured (precision, max_dim, M)" %
              (out, gpu, nb, sum(len(v) for v in winners.values())), file=sys.stderr)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="dispatch_tune.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("matrix", help="write the tuning sweep's benchmark matrix")
    m.add_argument("--registry", required=True, help="`maxgemm list --csv` output")
    m.add_argument("--n", type=int, default=8192)
    m.add_argument("--k", type=int, default=8192)
    m.add_argument("--m", default=",".join(str(v) for v in SWEEP_M), help="comma-separated batch sizes")
    m.add_argument("--precisions", default="fp32,tf32,bf16")
    m.add_argument("--max-dims", default="1,0")
    m.add_argument("--variants", default=DEFAULT_VARIANTS, help="the matrix's 'variants' line ('' for none)")
    m.add_argument("--kernels", default="", help="comma-separated kernel ids instead of every candidate")
    m.add_argument("--samples", type=int, default=25)
    m.add_argument("--prune", type=float, default=2.0, help="the matrix's 'prune' (0: none)")
    m.add_argument("-o", "--output", required=True)
    p = sub.add_parser("pick", help="write the dispatch table from benchmark CSVs")
    p.add_argument("csv", nargs="+")
    p.add_argument("--registry", help="`maxgemm list --csv` output: leaves out the baselines")
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--k", type=int, default=8192)
    p.add_argument("--gpu", help="the GPU whose rows to use (when the CSVs hold several)")
    p.add_argument("--margin", type=float, default=0.02,
                   help="an option variant replaces its kernel's own policy only when faster by more than this "
                        "fraction (default 0.02)")
    p.add_argument("--command", help="the command the user ran (e.g. the make target), recorded in the header before this one")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("-o", "--output", help="the table file ('-': stdout)")
    g.add_argument("--out-dir", help="write DIR/<gpu>.tsv (e.g. h200.tsv for NVIDIA H200)")
    a = ap.parse_args(argv)
    try:
        return cmd_matrix(a) if a.cmd == "matrix" else cmd_pick(a)
    except (Bad, OSError, KeyError, ValueError) as e:
        print("dispatch_tune: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
