#!/usr/bin/env python3
"""test_sweep_summary.py: tools/sweep_summary.py on a made-up sweep CSV and on the committed bench/results/h200.csv.
Run by `make test` (python3 test/test_sweep_summary.py)."""
import contextlib
import csv
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import sweep_summary  # noqa: E402

FIELDS = ["kernel", "name", "precision", "max_dim", "m", "n", "k", "shortcut", "median_ms", "gbps", "x_kernel0",
          "status", "requested_kernel"]


def run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = sweep_summary.main(args)
    return rc, out.getvalue(), err.getvalue()


def line_with(text, *words):
    hits = [l for l in text.splitlines() if all(w in l for w in words)]
    assert len(hits) == 1, (words, hits)
    return hits[0]


class SweepSummary(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.tmp.name, "sweep.csv")
        with open(self.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            # copy rate 4000 GB/s: the W floor at 8192 x 8192 bf16 is 33.554 us, the bar 38.587 us
            w.writerow({"kernel": -1, "name": "ceiling_copy", "median_ms": 1.0, "gbps": 4000, "status": "ok"})
            for prec in ("bf16", "tf32", "fp32"):
                for md in (1, 0):
                    for m in sweep_summary.SWEEP:
                        x = 1.2 if prec != "fp32" else 2.0
                        ms = 0.038 if m <= 64 else 0.1
                        status = "ok"
                        if prec == "tf32" and md == 0 and m == 300:
                            x = 0.99                  # one row under 1.00
                        if prec == "fp32" and md == 1 and m == 16:
                            status = "fail"           # a failed row: missing from the sweep
                        if prec == "bf16" and md == 0 and m == 32:
                            ms = 0.0390               # 39.0 us: over the bar
                        common = {"precision": prec, "max_dim": md, "m": m, "n": 8192, "k": 8192, "shortcut": 0}
                        w.writerow(dict(common, kernel=0, name="cublas", requested_kernel=0, median_ms=0.05,
                                        x_kernel0=1, status="ok"))
                        w.writerow(dict(common, kernel=8, name="wgmma_swapab", requested_kernel="auto",
                                        median_ms=ms, x_kernel0=x, status=status))
            # rows that are not the sweep: another N, a shortcut row, an explicit kernel
            w.writerow({"kernel": 8, "precision": "bf16", "max_dim": 1, "m": 8, "n": 4096, "k": 8192, "shortcut": 0,
                        "median_ms": 0.5, "x_kernel0": 0.5, "status": "ok", "requested_kernel": "auto"})
            w.writerow({"kernel": 8, "precision": "bf16", "max_dim": 1, "m": 8, "n": 8192, "k": 8192, "shortcut": 1,
                        "median_ms": 0.5, "x_kernel0": 0.5, "status": "ok", "requested_kernel": "auto"})
            w.writerow({"kernel": 4, "precision": "bf16", "max_dim": 1, "m": 8, "n": 8192, "k": 8192, "shortcut": 0,
                        "median_ms": 0.5, "x_kernel0": 0.5, "status": "ok", "requested_kernel": 4})

    def tearDown(self):
        self.tmp.cleanup()

    def test_targets(self):
        rc, out, err = run([self.csv])
        self.assertEqual(rc, 0, err)
        self.assertIn("22 of 22 rows, geomean 1.200, lowest 1.200", line_with(out, "bf16 max_dim 1:", "of 22 rows"))
        self.assertIn("lowest 0.990 at M = 300 (kernel 8), below 1.00: [300]",
                      line_with(out, "tf32 max_dim 0:", "of 22 rows"))
        self.assertIn("21 of 22 rows", line_with(out, "fp32 max_dim 1:", "of 22 rows"))
        self.assertTrue(line_with(out, "bf16 max_dim 1: every M").endswith(": met"))
        self.assertIn("NOT met (a row at 0.990 < 1.00)", line_with(out, "tf32 max_dim 0: every M"))
        self.assertIn("NOT met (rows missing or failed: M = [16])", line_with(out, "fp32 max_dim 1: every M"))
        self.assertTrue(line_with(out, "fp32 max_dim 0: every M").endswith(": met"))
        self.assertIn("floor (8192 x 8192 x 2 B at the copy rate 4000 GB/s: 33.55 us; bar 38.59 us)", out)
        self.assertTrue(line_with(out, "    max_dim 1:").endswith("us: met"))
        self.assertIn("32:39.0", line_with(out, "    max_dim 0:"))
        self.assertTrue(line_with(out, "    max_dim 0:").endswith("NOT met at M = 32"))

    def test_geomean_fails_under_1_10(self):
        with open(self.csv, newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            if r["precision"] == "bf16" and r["max_dim"] == "1" and r["requested_kernel"] == "auto":
                r["x_kernel0"] = "1.05"
        with open(self.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
        rc, out, _ = run([self.csv])
        self.assertEqual(rc, 0)
        self.assertIn("NOT met (geomean 1.050 < 1.10)", line_with(out, "bf16 max_dim 1: every M"))

    def test_errors(self):
        rc, _, err = run([os.path.join(self.tmp.name, "none.csv")])
        self.assertEqual(rc, 2)
        self.assertIn("none.csv", err)
        rc, _, err = run(["--n", "4096", "--k", "4096", self.csv])
        self.assertEqual(rc, 2)
        self.assertIn("no auto rows of the M sweep at N = 4096, K = 4096", err)
        rc, _, err = run(["--bogus", self.csv])
        self.assertEqual(rc, 2)

    def test_committed_csv(self):
        path = os.path.join(ROOT, "bench", "results", "h200.csv")
        rc, out, err = run([path])
        self.assertEqual(rc, 0, err)
        for prec in ("bf16", "tf32", "fp32"):
            for md in ("1", "0"):
                self.assertIn("22 of 22 rows", line_with(out, f"{prec} max_dim {md}:", "of 22 rows"))
        self.assertIn("bf16 M <= 64 within 1.15 x the W byte floor", out)


if __name__ == "__main__":
    unittest.main()
