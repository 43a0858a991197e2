#!/usr/bin/env python3
"""Summarise kernel 8's per-CTA %globaltimer timeline, one line per launch (the first launch, a warm-up, skipped).

The timeline is an experiment build (notes/runs/r117_r118_exp_timeline.diff, r122_plan_finish_timeline.diff), whose
CLI prints, per CTA of each launch:
  TL blk smid start first_full_stage kloop_end epilogue_end mu_known end   (mu_known: max_dim 0's grid finish, else
                                                                             not a time)
  TP blk produce_entered first_tma_issue
  TF blk barrier consumers_sum slot_stored poll_done tree_done rounds_lane0 rounds_max   (r122's finish stamps)
  TS blk entry barrier sum_start shuffle_done sum_done   (r127's: grid_finish's entry, after its first barrier,
                                                          consumers_sum's start, after its shuffle tree, after its
                                                          barrier; notes/runs/r127_exp_finish_stamps.diff)
  TL2 blk start kloop_end epilogue_end mu_known end      (r144's light timeline, no printf in the kernel,
                                                          notes/runs/r144_exp_light_timeline.diff; the CLI prints the
                                                          latest launch's stamps once per run: one launch a file)
Times are in us from the launch's first CTA start.

usage: tools/timeline_summary.py [--ctas N] FILE...
"""
import argparse
import statistics as st


def parse(path):
    rows = {"TL": [], "TP": [], "TF": [], "TS": [], "TL2": []}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and w[0] in rows:
                rows[w[0]].append([int(x) for x in w[1:]])
    return rows


def span(vals):
    return f"{min(vals):.2f}-{max(vals):.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ctas", type=int, default=128, help="CTAs per launch (default 128: N = 8192, 64-row W tiles)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    n = a.ctas
    for path in a.files:
        rows = parse(path)
        print(path)
        tl, tp, tf, ts = rows["TL"], rows["TP"], rows["TF"], rows["TS"]
        if rows["TL2"]:   # one launch: each mark's range over the CTAs and the span, from the first CTA's start
            b = rows["TL2"]
            t0 = min(r[1] for r in b)
            us = lambda v: (v - t0) / 1e3
            mu = [us(r[4]) for r in b if r[4]]
            print(f"  TL2 {len(b)} CTAs: starts {span([us(r[1]) for r in b])}  k-loop end {span([us(r[2]) for r in b])}"
                  f"  epilogues end {span([us(r[3]) for r in b])}" + (f"  mu known {span(mu)}" if mu else "")
                  + f"  ends {span([us(r[5]) for r in b])}  span {max(us(r[5]) for r in b):.2f}")
        for i in range(1, len(tl) // n):
            blk = tl[i * n:(i + 1) * n]
            t0 = min(r[2] for r in blk)
            us = lambda v: (v - t0) / 1e3
            first, kend, epi, end = ([us(r[c]) for r in blk] for c in (3, 4, 5, 7))
            line = (f"  first stage {span(first)} (median {st.median(first):.2f})  k-loop end {span(kend)}"
                    f"  last epilogue {max(epi):.2f}")
            mu = [us(r[6]) for r in blk if 0 < r[6] - t0 < 10**9]
            if mu:
                line += f"  mu known {span(mu)}"
            line += f"  end {max(end):.2f}"
            p = tp[i * n:(i + 1) * n]
            if len(p) == n:
                line += f" | produce() {span([us(r[1]) for r in p])}  first TMA {span([us(r[2]) for r in p])}"
            print(line)
            last = max(range(n), key=lambda j: blk[j][5])   # the CTA whose epilogue ended last
            f = tf[i * n:(i + 1) * n]
            if len(f) == n:
                lb = [r for r in f if r[0] == blk[last][0]]
                cols = ("barrier", "consumers_sum", "slot stored", "poll done", "tree done")
                print("    finish, all CTAs: " + "  ".join(f"{c} {span([us(r[k + 1]) for r in f])}"
                                                      for k, c in enumerate(cols))
                      + f"  rounds max {max(r[7] for r in f)}")
                if lb:
                    r = lb[0]
                    print(f"    finish, the last CTA ({r[0]}): " +
                          "  ".join(f"{c} {us(r[k + 1]):.2f}" for k, c in enumerate(cols)) + f"  rounds {r[6]}")
            s_ = ts[i * n:(i + 1) * n]
            if len(s_) == n:   # the last CTA's steps, each from the one before (its epilogue's end first)
                ls = [r for r in s_ if r[0] == blk[last][0]]
                if ls:
                    r = ls[0]
                    marks = [blk[last][5]] + r[1:6]
                    steps = ("entry", "barrier", "column loop", "shuffle tree", "sum barrier")
                    print(f"    grid_finish, the last CTA ({r[0]}), us after the step before: " +
                          "  ".join(f"{c} +{(marks[k + 1] - marks[k]) / 1e3:.2f}" for k, c in enumerate(steps)))


if __name__ == "__main__":
    main()
