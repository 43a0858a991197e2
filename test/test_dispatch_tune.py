#!/usr/bin/env python3
"""test_dispatch_tune.py: tools/dispatch_tune.py's CPU steps on small fixtures (test/fixtures/dispatch_*.csv).
Run by `make test` (python3 test/test_dispatch_tune.py [--build DIR]); also checks, where build/gen_dispatch exists, that the
table it writes is one the build accepts."""
import contextlib
import csv
import io
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import dispatch_tune as dt  # noqa: E402

CSV = os.path.join(HERE, "fixtures", "dispatch_pick.csv")
REG = os.path.join(HERE, "fixtures", "dispatch_registry.csv")
BUILD = "build"   # --build DIR (make test passes $(BUILD)): where gen_dispatch is
if "--build" in sys.argv:
    i = sys.argv.index("--build")
    BUILD = sys.argv[i + 1]
    del sys.argv[i:i + 2]
GEN = os.path.join(ROOT, BUILD, "gen_dispatch")


def table_rows(text):
    """The data rows of a table: [precision, max_dim, m_lo, m_hi, kernel, options, x_kernel0, n, k]."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("gpu"):
            out.append(line.split())
    return out


def quiet_main(args):
    """dispatch_tune.main with its progress lines on stderr swallowed."""
    with contextlib.redirect_stderr(io.StringIO()):
        return dt.main(args)


def run_pick(args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "t.tsv")
        rc = quiet_main(["pick"] + args + ["-o", out])
        text = None
        if rc == 0:
            with open(out) as f:
                text = f.read()
        return rc, text


class Pick(unittest.TestCase):
    def test_winners_and_buckets(self):
        rc, text = run_pick([CSV, "--registry", REG])
        self.assertEqual(rc, 0)
        self.assertEqual(table_rows(text), [
            # M 1 and 2: gemv_stream (cublas_bf16x3's 1.50 is a baseline's, left out with the registry)
            ["bf16", "1", "1", "2", "gemv_stream", "auto", "1.050..1.100", "8192", "8192"],
            # M 4 and 8: the variant beats auto by more than the 2% margin; the ';' of the CSV and the key order are
            # normalised
            ["bf16", "1", "3", "8", "wgmma_ws", "tiles=small,streamk=off", "1.050..1.060", "8192", "8192"],
            # M 16: wgmma_ws measured twice, 1.20 and 1.00: geometric mean 1.095 < 1.096 (the arithmetic mean would win)
            ["bf16", "1", "9", "16", "wgmma_swapab", "auto", "1.096", "8192", "8192"],
            # M 32: the failed check, the skipped row, N = 1000, a table-chosen auto row and a short-circuit row are
            # not candidates
            ["bf16", "1", "17", "32", "wgmma_swapab", "splits=4", "1.300", "8192", "8192"],
            ["bf16", "0", "1", "1", "gemv_stream", "auto", "1.000", "8192", "8192"],
        ])
        # the header: the GPU line and what the CSV says about where and when
        self.assertIn("gpu\tNVIDIA H200\n", text)
        self.assertIn("# driver:      580.1 (CUDA 13.0)", text)
        self.assertIn("# commit:      abc123, def456", text)
        self.assertIn("# date:        2026-12-01T00:00:00Z, 2026-12-02T00:00:00Z", text)
        self.assertIn("# M 16:1.096", text)

    def test_a_variant_within_the_margin_keeps_the_policy(self):
        # M 4: 1.05 against the kernel's own 1.00; M 8: 1.06 against 1.01: neither beats auto by more than 6%
        rc, text = run_pick([CSV, "--registry", REG, "--margin", "0.06"])
        self.assertEqual(rc, 0)
        self.assertEqual(table_rows(text)[1][2:6], ["3", "8", "wgmma_ws", "auto"])

    def test_without_registry_every_kernel_but_0_competes(self):
        rc, text = run_pick([CSV])
        self.assertEqual(rc, 0)
        self.assertEqual(table_rows(text)[0][:6], ["bf16", "1", "1", "1", "cublas_bf16x3", "auto"])

    def test_old_csv_without_options_column(self):
        with open(CSV) as f:
            rows = list(csv.DictReader(f))
        with tempfile.TemporaryDirectory() as d:
            old = os.path.join(d, "old.csv")
            cols = [c for c in rows[0] if c not in ("options", "dispatch")]
            with open(old, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
                w.writeheader()
                for r in rows:
                    if r["dispatch"] == "":   # before the dispatch column, no auto row followed a table
                        w.writerow(r)
            rc, text = run_pick([old, "--registry", REG])
        self.assertEqual(rc, 0)
        rows_ = table_rows(text)
        self.assertEqual(rows_[1][4:6], ["wgmma_ws", "tiles=small,streamk=off"])
        # splits was never a column: the M 32 winner reads as the kernel's own policy, one bucket with M 16's
        self.assertEqual(rows_[2][2:6], ["9", "32", "wgmma_swapab", "auto"])

    def test_a_precision_selector_per_file(self):
        # CSV:PRECS keeps only those precisions' rows of that file: a file of bf16 rows and the same rows relabelled
        # tf32, named twice with disjoint selectors, gives the table of the file named once; one selector, one
        # precision's rows
        with open(CSV) as f:
            rows = list(csv.DictReader(f))
        with tempfile.TemporaryDirectory() as d:
            two = os.path.join(d, "two.csv")
            with open(two, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                for r in rows:
                    w.writerow(r)
                    if r["precision"] == "bf16":
                        w.writerow(dict(r, precision="tf32"))
            rc, whole = run_pick([two, "--registry", REG])
            self.assertEqual(rc, 0)
            self.assertEqual({r[0] for r in table_rows(whole)}, {"bf16", "tf32"})
            rc, split = run_pick([two + ":tf32", two + ":bf16,fp32", "--registry", REG])
            self.assertEqual(rc, 0)
            self.assertEqual(table_rows(split), table_rows(whole))
            rc, one = run_pick([two + ":bf16", "--registry", REG])
            self.assertEqual(rc, 0)
            self.assertEqual({r[0] for r in table_rows(one)}, {"bf16"})
        self.assertEqual(dt.csv_source("a:b.csv"), ("a:b.csv", None), "a ':' not followed by precisions is a path")
        self.assertEqual(dt.csv_source("x.csv:fp32,bf16"), ("x.csv", {"fp32", "bf16"}))

    def test_two_gpus_need_a_choice(self):
        with open(CSV) as f:
            text = f.read()
        extra = text.splitlines()[2].replace("NVIDIA H200", "NVIDIA H100 80GB HBM3")
        with tempfile.TemporaryDirectory() as d:
            two = os.path.join(d, "two.csv")
            with open(two, "w") as f:
                f.write(text + extra + "\n")
            rc, _ = run_pick([two, "--registry", REG])
            self.assertEqual(rc, 1)
            rc, t = run_pick([two, "--registry", REG, "--gpu", "NVIDIA H100 80GB HBM3"])
            self.assertEqual(rc, 0)
            self.assertEqual(table_rows(t), [["bf16", "1", "1", "1", "gemv_stream", "auto", "1.100", "8192", "8192"]])
            # --out-dir names the file after the GPU
            self.assertEqual(quiet_main(["pick", two, "--gpu", "NVIDIA H100 80GB HBM3", "--out-dir", d]), 0)
            self.assertTrue(os.path.exists(os.path.join(d, "h100_80gb_hbm3.tsv")))

    def test_no_candidates_is_an_error(self):
        rc, _ = run_pick([CSV, "--registry", REG, "--n", "4096"])
        self.assertEqual(rc, 1)

    def test_merge_rule(self):
        pts = [(1, "a", "auto", 1.0), (4, "a", "auto", 1.2), (8, "b", "auto", 1.1), (16, "a", "auto", 1.3)]
        self.assertEqual([(lo, hi, k) for lo, hi, k, _, _ in dt.buckets(pts)], [(1, 4, "a"), (5, 8, "b"), (9, 16, "a")])
        self.assertEqual(dt.canon_options("splits=2;tiles=auto;streamk=off"), "streamk=off,splits=2")
        self.assertEqual(dt.canon_options(""), "auto")
        self.assertEqual(dt.slug("NVIDIA H200"), "h200")

    @unittest.skipUnless(os.path.exists(GEN), "build/gen_dispatch not built")
    def test_the_build_accepts_the_table(self):
        with tempfile.TemporaryDirectory() as d:
            t = os.path.join(d, "t.tsv")
            self.assertEqual(quiet_main(["pick", CSV, "--registry", REG, "-o", t]), 0)
            r = subprocess.run([GEN, os.path.join(d, "t.c"), t], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "t.c")) as f:
                self.assertIn('.kernel = "wgmma_swapab", .opt = {.set = 0x10u', f.read())


class Matrix(unittest.TestCase):
    def test_sweep_of_candidates(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "m.txt")
            self.assertEqual(quiet_main(["matrix", "--registry", REG, "--n", "4096", "--k", "1024", "--m", "1,300",
                                      "-o", out]), 0)
            with open(out) as f:
                text = f.read()
        lines = [l for l in text.splitlines() if not l.startswith("#")]
        self.assertIn("kernels        4 7 8", lines)   # not the baselines 0 and 5
        self.assertIn("prune          2", lines)
        self.assertIn("variants       " + dt.DEFAULT_VARIANTS, lines)
        self.assertEqual([l for l in lines if l.startswith("shape")], ["shape      1 4096 1024", "shape    300 4096 1024"])

    def test_bad_arguments(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "m.txt")
            self.assertEqual(quiet_main(["matrix", "--registry", REG, "--kernels", "0", "-o", out]), 1)
            self.assertEqual(quiet_main(["matrix", "--registry", REG, "--kernels", "3", "-o", out]), 1)
            self.assertEqual(quiet_main(["matrix", "--registry", REG, "--m", "x", "-o", out]), 1)
            self.assertEqual(quiet_main(["matrix", "--registry", REG, "--precisions", "fp16", "-o", out]), 1)


if __name__ == "__main__":
    unittest.main(verbosity=1)
