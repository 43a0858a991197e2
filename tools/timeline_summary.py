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
  TL3 blk start kloop_end epilogue_end mu_known end slot_stored poll_done own_seen
                                                         (TL2 and three marks of the poller's finish: the CTA's own slot
                                                          stored, its poller's last slot seen, its own sum seen;
                                                          notes/runs/r147_exp_light_timeline.diff, r152_*_tl3.diff)
  TL4 blk (TL3's eight) grid_finish_entry after_barrier after_sum after_tag epilogue_start epilogue_shuffled
                                                         (notes/runs/r149_exp_timeline4.diff)
Times are in us from the launch's first CTA start; TL2-TL4 add the k-loops' balance (their mean end, the last one's
distance from it, and the CTAs ending more than 1 us before the last: at most what deterministic K-chunk stealing could
take; run 196 found it takes nothing on an H200 either, the last end at M = 32-64 being the balanced M = 8 run's);
TL3 / TL4 add the max_dim 0 tail from the last CTA's epilogue end
(E): the last CTA's slot stored, every poller done, every CTA's mean known, the launch's end; and the per-CTA medians
of each step (TL4: each step from the one before it).

usage: tools/timeline_summary.py [--ctas N] FILE...
"""
import argparse
import statistics as st


def parse(path):
    rows = {"TL": [], "TP": [], "TF": [], "TS": [], "TL2": [], "TL3": [], "TL4": []}
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
        kind = "TL2" if rows["TL2"] else "TL3" if rows["TL3"] else "TL4"
        light = rows["TL2"] or [r[:6] for r in rows["TL3"] or rows["TL4"]]
        if light:   # one launch: each mark's range over the CTAs and the span, from the first CTA's start
            b = light
            t0 = min(r[1] for r in b)
            us = lambda v: (v - t0) / 1e3
            mu = [us(r[4]) for r in b if r[4]]
            print(f"  {kind} {len(b)} CTAs: starts {span([us(r[1]) for r in b])}  k-loop end {span([us(r[2]) for r in b])}"
                  f"  epilogues end {span([us(r[3]) for r in b])}" + (f"  mu known {span(mu)}" if mu else "")
                  + f"  ends {span([us(r[5]) for r in b])}  span {max(us(r[5]) for r in b):.2f}")
            # the k-loops' balance (an upper bound on what K-chunk stealing could take): their mean end is where the
            # last one would end if the early CTAs' idle time were all lost bandwidth; it is not where the stream
            # runs at the copy rate (the early finishers leave their bandwidth to the rest: runs 166, 196). The early
            # finishers are the CTAs whose k-loop ended > 1 us before the last one's
            kend = [us(r[2]) for r in b]
            last, mean = max(kend), st.mean(kend)
            early = sorted(r[0] for r, k in zip(b, kend) if last - k > 1.0)
            print(f"  k-loop ends: mean {mean:.2f}  median {st.median(kend):.2f}  last {last:.2f}"
                  f"  (last - mean {last - mean:.2f})  ending > 1 us before the last: {len(early)}"
                  + (f" (blocks {' '.join(map(str, early))})" if early else ""))
        fine = rows["TL3"] or rows["TL4"]
        if fine and all(r[4] for r in fine):   # max_dim 0's tail, from the last epilogue's end E
            e = max(r[3] for r in fine)
            last = max(fine, key=lambda r: r[3])
            ue = lambda v: (v - e) / 1e3
            print(f"  tail after E: the last CTA's slot stored +{ue(last[6]):.2f}  pollers done "
                  f"{span([ue(r[7]) for r in fine])}  mu known {span([ue(r[4]) for r in fine])}  end "
                  f"+{max(ue(r[5]) for r in fine):.2f}")
            med = lambda a, b: st.median((r[b] - r[a]) / 1e3 for r in fine)
            print(f"  per CTA (medians): epilogue end -> slot stored {med(3, 6):.2f}  poll done -> own seen "
                  f"{med(7, 8):.2f}  own seen -> mu known {med(8, 4):.2f}  mu known -> end {med(4, 5):.2f}")
        if rows["TL4"] and all(r[9] for r in rows["TL4"]):
            steps = ((2, 13, "k-loop end -> epilogue start"), (13, 14, "-> its shuffles"), (14, 3, "-> epilogue end"),
                     (3, 9, "-> grid_finish entry"), (9, 10, "-> its barrier"), (10, 11, "-> the column sum"),
                     (11, 12, "-> the tag"), (12, 6, "-> slot stored"))
            print("  TL4 per CTA (medians): " + "  ".join(
                f"{c} {st.median((r[b] - r[a]) / 1e3 for r in rows['TL4']):.2f}" for a, b, c in steps))
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
