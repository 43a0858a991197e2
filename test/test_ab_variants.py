#!/usr/bin/env python3
"""test_ab_variants.py: tools/ab_variants.py on small made-up passes (a base A and a variant V, two passes each).
Run by `make test` (python3 test/test_ab_variants.py)."""
import contextlib
import csv
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import ab_variants  # noqa: E402

FIELDS = ["kernel", "precision", "max_dim", "m", "n", "k", "median_ms", "x_kernel0", "pass", "status",
          "requested_kernel"]


def write_pass(d, name, rows):
    """rows: (precision, max_dim, m, median_ms, x_kernel0[, status]); each with its kernel 0 row before it."""
    with open(os.path.join(d, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            status = r[5] if len(r) > 5 else "ok"
            common = {"precision": r[0], "max_dim": r[1], "m": r[2], "n": 8192, "k": 8192, "pass": 1}
            w.writerow(dict(common, kernel=0, requested_kernel=0, median_ms=0.05, x_kernel0=1, status="ok"))
            w.writerow(dict(common, kernel=8, requested_kernel="auto", median_ms=r[3], x_kernel0=r[4],
                            status=status))


def run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = ab_variants.main(args)
    return rc, out.getvalue(), err.getvalue()


class AbVariants(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.d = self.tmp.name
        # A: bf16 md1 M = 8 at 0.040 and 0.038 ms (mean 0.039), M = 128 at 0.060; V: 0.036 (faster by 39/36) and
        # 0.060 (the same); V's tf32 row failed its check in one pass and is left out of that pass only
        write_pass(d, "ab_A_1.csv", [("bf16", 1, 8, 0.040, 1.20), ("bf16", 1, 128, 0.060, 1.10),
                                     ("tf32", 0, 8, 0.070, 1.00)])
        write_pass(d, "ab_V_1.csv", [("bf16", 1, 8, 0.036, 1.30), ("bf16", 1, 128, 0.060, 1.10),
                                     ("tf32", 0, 8, 0.070, 1.00, "fail")])
        write_pass(d, "ab_V_2.csv", [("bf16", 1, 8, 0.036, 1.30), ("bf16", 1, 128, 0.060, 1.10),
                                     ("tf32", 0, 8, 0.035, 2.00)])
        write_pass(d, "ab_A_2.csv", [("bf16", 1, 8, 0.038, 1.20), ("bf16", 1, 128, 0.060, 1.10),
                                     ("tf32", 0, 8, 0.070, 1.00)])

    def tearDown(self):
        self.tmp.cleanup()

    def table(self, text, title):
        """{variant: [cells]} of the table after the line that starts with title."""
        lines = text.splitlines()
        i = next(j for j, line in enumerate(lines) if line.startswith(title))
        rows = {}
        for line in lines[i + 2:]:
            if not line.strip():
                break
            w = line.split()
            rows[w[0]] = w[1:]
        return lines[i + 1].split(), rows

    def test_ratios_per_group_and_range(self):
        rc, out, _ = run([self.d])
        self.assertEqual(rc, 0)
        self.assertIn("passes: A 2, V 2; failed or unchecked rows: {'V': 1}", out)
        head, rows = self.table(out, "geomean of base time / variant time")
        cells = dict(zip([" ".join(head[i:i + 3]) for i in range(0, len(head), 3)], rows["V"]))
        self.assertEqual(cells["bf16 md1 <=64"], f"{0.039 / 0.036:.3f}")
        self.assertEqual(cells["bf16 md1 >64"], "1.000")
        self.assertEqual(cells["tf32 md0 <=64"], "2.000")   # V's one good pass
        self.assertEqual(cells["tf32 md0 >64"], "-")        # no such rows
        _, rows = self.table(out, "geomean of variant x_kernel0 / base x_kernel0")
        self.assertEqual(rows["V"][0], f"{1.30 / 1.20:.3f}")
        self.assertIn("max_dim 1, M = 8", out)
        self.assertRegex(out, r"A\s+39\.0\n\s+V\s+36\.0")

    def test_another_base_and_split(self):
        rc, out, _ = run(["--base", "V", "--split", "128", self.d])
        self.assertEqual(rc, 0)
        _, rows = self.table(out, "geomean of base time / variant time")
        # M = 8 and M = 128 both in the first range now: V's time over A's, 36 / 39 and 1
        self.assertEqual(rows["A"][0], f"{(0.036 / 0.039) ** 0.5:.3f}")

    def test_usage_errors(self):
        rc, _, err = run(["--base", "Z", self.d])
        self.assertEqual(rc, 2)
        self.assertIn("no files of the base variant Z (found: A, V)", err)
        rc, _, err = run([os.path.join(self.d, "nothere_A_1.csv")])
        self.assertEqual(rc, 2)
        self.assertIn("no such file", err)
        bad = os.path.join(self.d, "results.csv")
        open(bad, "w").close()
        rc, _, err = run([bad])
        self.assertEqual(rc, 2)
        self.assertIn("not named", err)
        rc, _, _ = run([])
        self.assertEqual(rc, 2)


if __name__ == "__main__":
    unittest.main()
