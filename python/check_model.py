#!/usr/bin/env python3
"""check_model.py: ModelNew (libmaxgemm from PyTorch) against the reference Model, then timed against eager and
torch.compile.

Correctness (SEMANTICS.md), for max_dim in (1, 0), dtype in (float32, bfloat16), and for max_dim 1 with the
short-circuit on and off:
  - fp32 output vs an fp64 evaluation of the same Model (model.double() on x.double()), atol = rtol = 1e-4;
  - bf16 output vs the fp64 Model on the bf16-rounded weights and inputs, atol = rtol = 1e-2;
  - NaN exactly where the reference has NaN; output shape and dtype equal to the reference's.
  Cases: seed-like inputs for several seeds (one ModelNew per (max_dim, dtype) is reused across seeds through
  load_state_dict, so each seed after the first also checks that changed weights are re-set), planted NaN / +inf /
  -inf in rows of x, NaN in W, +inf in b, and a non-contiguous x. torch's own eager output is compared with the same
  reference and reported (not pass/fail). API checks: the errors ModelNew must raise.
Timing (CUDA events, warm-up, median of --reps >= 20, warm L2), max_dim 1: eager Model, torch.compile(Model)
(default mode; a failure to compile is reported and skipped), ModelNew with the short-circuit off and on, and
ModelNew at max_dim 0, each for float32 and bfloat16, with speedups over eager and torch.compile.

Usage (repository root, after `make build/libmaxgemm.so`):
    python3 python/check_model.py [--batch 1024 --in 8192 --out 8192] [--kernel auto] [--quick]
                                  [--reps 20] [--no-compile] [--out-json results.json]
--quick: 2 seeds instead of 5 and no torch.compile. Exit status: 0 all checks pass, 1 a check failed, 2 no GPU.
"""

import argparse
import copy
import datetime
import json
import math
import os
import statistics
import time
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from maxgemm_torch import ModelNew, library_path  # noqa: E402


class Model(nn.Module):
    """The reference model, exactly as in SEMANTICS.md."""

    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        x = torch.nn.functional.gelu(x)
        return x


DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
BARS = {"fp32": 1e-4, "bf16": 1e-2}  # atol = rtol (SEMANTICS.md)


def compare(out, ref, bar):
    """|out - ref| <= bar + bar * |ref| elementwise (equal infinities pass), NaN exactly where ref is NaN."""
    res = {"shape_ok": tuple(out.shape) == tuple(ref.shape), "max_abs_err": None, "worst_over_bar": None,
           "nan_match": False, "n_bad": None, "ok": False}
    if not res["shape_ok"]:
        return res
    o = out.detach().double()
    r = ref.detach().double()
    nan_o, nan_r = torch.isnan(o), torch.isnan(r)
    res["nan_match"] = bool(torch.equal(nan_o, nan_r))
    both = ~nan_o & ~nan_r
    o, r = o[both], r[both]
    diff = torch.where(o == r, torch.zeros_like(o), (o - r).abs())  # o == r also covers equal infinities
    allowed = bar + bar * r.abs()
    ratio = torch.nan_to_num(diff / allowed, nan=math.inf)  # inf - inf of opposite signs counts as a failure
    n_bad = int((ratio > 1).sum()) + int((nan_o != nan_r).sum())
    res["n_bad"] = n_bad
    res["max_abs_err"] = float(diff.max()) if diff.numel() else 0.0
    res["worst_over_bar"] = float(ratio.max()) if ratio.numel() else 0.0
    res["ok"] = res["nan_match"] and n_bad == 0
    return res


def kernel_of(new, m, dtype):
    for p in new.plan_info():
        if p["m"] == m and p["dtype"] == str(dtype).replace("torch.", ""):
            return f'{p["kernel"]}:{p["kernel_name"]}'
    return "-"


def check_case(name, seed, model, x, news, rows, noncontig=False):
    """Every (max_dim, dtype, shortcut) of one (model, x) pair against the fp64 Model."""
    mbf = copy.deepcopy(model).to(torch.bfloat16)
    m64 = copy.deepcopy(model).double()
    mbf64 = copy.deepcopy(mbf).double()
    xbf = x.to(torch.bfloat16)
    state = model.state_dict()
    for md in (1, 0):
        for mm in (model, mbf, m64, mbf64):
            mm.max_dim = md
        for dname, dtype in DTYPES.items():
            bar = BARS[dname]
            xin, eager_model, ref = (x, model, m64(x.double())) if dname == "fp32" else (xbf, mbf, mbf64(xbf.double()))
            eager = compare(eager_model(xin), ref, bar)
            new = news[(md, dname)]
            new.load_state_dict(state)  # copy_ converts to the module's dtype (bf16: round to nearest even)
            xnew = xin.t().contiguous().t() if noncontig else xin
            for sc in ((True, False) if md == 1 else (None,)):
                if sc is not None:
                    new.shortcut = sc
                row = {"case": name, "seed": seed, "max_dim": md, "dtype": dname,
                       "shortcut": "-" if sc is None else ("on" if sc else "off"), "bar": bar,
                       "eager_max_abs_err": eager["max_abs_err"], "eager_ok": eager["ok"], "error": None}
                try:
                    out = new(xnew)
                    res = compare(out, ref, bar)
                    dtype_ok = out.dtype == xin.dtype
                    row.update(res)
                    row["dtype_ok"] = dtype_ok
                    row["ok"] = res["ok"] and dtype_ok
                    if not res["shape_ok"]:
                        row["error"] = f"shape {tuple(out.shape)}, torch gives {tuple(ref.shape)}"
                    elif not dtype_ok:
                        row["error"] = f"dtype {out.dtype}, torch gives {xin.dtype}"
                    row["kernel"] = kernel_of(new, x.shape[0], dtype)
                except Exception as e:  # a library error is a failed case, not a crash of the whole check
                    row.update({"ok": False, "error": f"{type(e).__name__}: {e}", "kernel": "-"})
                rows.append(row)
                print(f"  {name:12s} seed {seed} max_dim {md} {dname} shortcut {row['shortcut']:3s} "
                      f"kernel {row['kernel']:18s} max_abs {fmt(row.get('max_abs_err'))} "
                      f"worst/bar {fmt(row.get('worst_over_bar'))} nan {row.get('nan_match')} "
                      f"-> {'ok' if row['ok'] else 'FAIL'}{'  ' + row['error'] if row['error'] else ''}", flush=True)
    new_shortcut_default(news)


def new_shortcut_default(news):
    for (md, _), new in news.items():
        if md == 1:
            new.shortcut = True


def api_checks(M, K, N, dev, news, rows):
    """The errors ModelNew promises (python/README.md)."""
    def expect(name, exc, fn):
        row = {"case": "api", "name": name, "ok": False}
        try:
            fn()
            row["error"] = f"no exception (expected {exc.__name__})"
        except exc as e:
            row["ok"], row["error"] = True, None
            row["detail"] = f"{type(e).__name__}: {e}"
        except Exception as e:
            row["error"] = f"expected {exc.__name__}, got {type(e).__name__}: {e}"
        rows.append(row)
        print(f"  api: {name:40s} -> {'ok' if row['ok'] else 'FAIL  ' + row['error']}"
              f"{'  (' + row['detail'] + ')' if row.get('detail') else ''}", flush=True)

    f32 = news[(1, "fp32")]
    x = torch.rand(max(M, 1), K, device=dev)
    expect("max_dim=2 rejected at construction", ValueError, lambda: ModelNew(K, N, 2))
    expect("unknown kernel rejected at construction", ValueError, lambda: ModelNew(K, N, 1, kernel="no_such_kernel"))
    expect("CPU input rejected", TypeError, lambda: f32(x.cpu()))
    expect("wrong in_features rejected", ValueError, lambda: f32(torch.rand(2, K + 1, device=dev)))
    expect("1-D input rejected", ValueError, lambda: f32(torch.rand(K, device=dev)))
    expect("float64 input rejected", TypeError, lambda: f32(x.double()))
    expect("bf16 input to fp32 parameters rejected", TypeError, lambda: f32(x.to(torch.bfloat16)))
    # M = 0: torch gives (0, 1) for max_dim 1 and an error for max_dim 0 ("max on a tensor with no elements").
    empty = torch.empty(0, K, device=dev)
    out = f32(empty)
    ok = tuple(out.shape) == (0, 1) and out.dtype == torch.float32
    rows.append({"case": "api", "name": "M=0, max_dim 1 gives an empty (0, 1)", "ok": ok,
                 "error": None if ok else f"got shape {tuple(out.shape)} {out.dtype}"})
    print(f"  api: {rows[-1]['name']:40s} -> {'ok' if ok else 'FAIL  ' + rows[-1]['error']}", flush=True)
    expect("M=0, max_dim 0 raises like torch", RuntimeError, lambda: news[(0, "fp32")](empty))


def bench(what, dname, fn, reps, warmup):
    row = {"what": what, "dtype": dname, "ms": None, "min_ms": None, "loop_ms": None, "host_us": None, "reps": reps,
           "error": None}
    try:
        for _ in range(warmup):  # the first call also compiles (torch.compile) or creates the plan (ModelNew)
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        row["ms"], row["min_ms"] = statistics.median(times), min(times)
        # Back-to-back calls between one pair of events: the per-call time once launches queue up, which is what a
        # model calling forward in a loop sees (single-call times above include the host's own per-call overhead).
        # The host's own time per call (perf_counter around the same loop, before the final wait): when it is above
        # the loop's GPU time per call, the loop is host-bound, and the single-call time is mostly host time too.
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        t1 = time.perf_counter()
        b.record()
        b.synchronize()
        row["loop_ms"] = a.elapsed_time(b) / reps
        row["host_us"] = (t1 - t0) * 1e6 / reps
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    print(f"  {what:34s} {dname}  {fmt(row['ms'])} ms (in a loop: {fmt(row['loop_ms'])} ms/call, host "
          f"{fmt(row['host_us'])} us/call)"
          f"{'  ' + row['error'] if row['error'] else ''}", flush=True)
    return row


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    return f"{v:.3g}" if (v == 0 or 1e-3 <= abs(v) < 1e4) else f"{v:.2e}"


def main():
    ap = argparse.ArgumentParser(description="ModelNew (libmaxgemm) against the reference Model: accuracy against "
                                             "fp64, NaN/inf cases, API errors, then timing against eager and "
                                             "torch.compile.")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--in", dest="in_features", type=int, default=8192)
    ap.add_argument("--out", dest="out_features", type=int, default=8192)
    ap.add_argument("--kernel", default="auto", help="ModelNew kernel: auto, a registry name or number")
    ap.add_argument("--quick", action="store_true", help="2 seeds instead of 5, no torch.compile")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--reps", type=int, default=20, help="timed runs per row (median reported); at least 20")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--out-json", default=None, help="write every result row and the environment as JSON here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("check_model: no CUDA device; ModelNew runs on CUDA only", file=sys.stderr)
        return 2
    args.reps = max(args.reps, 20)
    M, K, N = args.batch, args.in_features, args.out_features
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default: the eager fp32 baseline is exact SGEMM
    torch.set_grad_enabled(False)
    seeds = list(range(2 if args.quick else 5))
    meta = {"gpu": torch.cuda.get_device_name(dev), "capability": list(torch.cuda.get_device_capability(dev)),
            "torch": torch.__version__, "cuda": torch.version.cuda, "library": library_path(),
            "M": M, "N": N, "K": K, "kernel": args.kernel, "seeds": seeds, "reps": args.reps,
            "allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "date": datetime.datetime.now().isoformat(timespec="seconds")}
    print(f"check_model: {meta['gpu']}, torch {meta['torch']} (CUDA {meta['cuda']}), M={M} N={N} K={K}, "
          f"kernel {args.kernel}, library {meta['library']}", flush=True)

    # One ModelNew per (max_dim, dtype), parameters created on the GPU, reused for every case.
    news = {}
    for md in (1, 0):
        for dname, dtype in DTYPES.items():
            with torch.device(dev):
                news[(md, dname)] = ModelNew(K, N, md, kernel=args.kernel).to(dtype)

    rows = []
    print("correctness:", flush=True)
    base_model, base_x = None, None
    for seed in seeds:
        torch.manual_seed(seed)
        with torch.device(dev):
            model = Model(K, N, 1)  # nn.Linear's init: W, b ~ U(-1/sqrt(K), 1/sqrt(K))
        x = torch.rand(M, K, device=dev)  # x ~ U[0, 1), as get_inputs()
        check_case("seed", seed, model, x, news, rows)
        if base_model is None:
            base_model, base_x = model, x

    # Planted non-finite values (on the first seed's model and x); rows/columns wrap for small shapes.
    if M > 0 and K > 0 and N > 0:
        def planted_x(vals):
            xp = base_x.clone()
            for (i, j, v) in vals:
                xp[i % M, j % K] = v
            return xp
        for name, vals in (("nan_x", [(3, 5, math.nan)]), ("posinf_x", [(7, 100, math.inf)]),
                           ("neginf_x", [(11, 17, -math.inf)]),
                           ("mixed_x", [(3, 5, math.nan), (7, 100, math.inf), (11, 17, -math.inf)])):
            check_case(name, seeds[0], base_model, planted_x(vals), news, rows)
        mp = copy.deepcopy(base_model)
        mp.gemm.weight[5 % N, 9 % K] = math.nan
        check_case("nan_W", seeds[0], mp, base_x, news, rows)
        mp = copy.deepcopy(base_model)
        mp.gemm.bias[2 % N] = math.inf
        check_case("posinf_b", seeds[0], mp, base_x, news, rows)
        del mp
        if M > 1 and K > 1:
            check_case("noncontig_x", seeds[0], base_model, base_x, news, rows, noncontig=True)

    print("api:", flush=True)
    api_checks(M, K, N, dev, news, rows)

    # Timing, max_dim 1 (and ModelNew at max_dim 0), on the first seed's model and x.
    print(f"timing (median of {args.reps}, warm L2):", flush=True)
    timing = []
    state = base_model.state_dict()
    for new in news.values():
        new.load_state_dict(state)
    new_shortcut_default(news)
    compile_on = not (args.quick or args.no_compile)
    for dname, dtype in DTYPES.items():
        model = copy.deepcopy(base_model).to(dtype)
        model.max_dim = 1
        x = base_x.to(dtype)
        group = [bench("eager Model", dname, lambda: model(x), args.reps, args.warmup)]
        if compile_on:
            compiled = torch.compile(copy.deepcopy(model))
            group.append(bench("torch.compile Model", dname, lambda: compiled(x), args.reps, args.warmup))
        new1, new0 = news[(1, dname)], news[(0, dname)]

        def run_new(on):
            new1.shortcut = on
            return new1(x)
        for label, fn in (("ModelNew max_dim 1 shortcut off", lambda: run_new(False)),
                          ("ModelNew max_dim 1 shortcut on", lambda: run_new(True)),
                          ("ModelNew max_dim 0", lambda: new0(x))):
            row = bench(label, dname, fn, args.reps, args.warmup)
            row["kernel"] = kernel_of(new0 if "max_dim 0" in label else new1, M, dtype)
            row["must_pass"] = True  # a ModelNew that cannot run is a failure; eager/compile rows are baselines
            group.append(row)
        eager_ms = group[0]["ms"]
        compile_ms = group[1]["ms"] if compile_on else None
        eager_loop, compile_loop = group[0].get("loop_ms"), group[1].get("loop_ms") if compile_on else None
        for row in group:
            if row["ms"]:
                row["x_eager"] = eager_ms / row["ms"] if eager_ms else None
                row["x_compile"] = compile_ms / row["ms"] if compile_ms else None
            if row.get("loop_ms"):
                row["x_eager_loop"] = eager_loop / row["loop_ms"] if eager_loop else None
                row["x_compile_loop"] = compile_loop / row["loop_ms"] if compile_loop else None
        timing.extend(group)
        new1.shortcut = True

    # Summary.
    checks = rows + [r for r in timing if r.get("must_pass")]
    failures = [r for r in rows if not r["ok"]] + [r for r in timing if r.get("must_pass") and r["error"]]
    print("\nsummary: correctness")
    print(f"{'case':12s} {'seed':>4s} {'dim':>3s} {'dtype':5s} {'sc':3s} {'kernel':18s} {'max_abs':>9s} "
          f"{'worst/bar':>9s} {'nan':5s} {'eager_abs':>9s} result")
    for r in rows:
        if r["case"] == "api":
            continue
        print(f"{r['case']:12s} {r['seed']:4d} {r['max_dim']:3d} {r['dtype']:5s} {r['shortcut']:3s} "
              f"{r.get('kernel', '-'):18s} {fmt(r.get('max_abs_err')):>9s} {fmt(r.get('worst_over_bar')):>9s} "
              f"{str(r.get('nan_match', '-')):5s} {fmt(r.get('eager_max_abs_err')):>9s} "
              f"{'ok' if r['ok'] else 'FAIL ' + (r['error'] or '')}")
    api = [r for r in rows if r["case"] == "api"]
    print(f"api checks: {sum(r['ok'] for r in api)}/{len(api)} pass")
    for r in api:
        if not r["ok"]:
            print(f"  FAIL {r['name']}: {r['error']}")
    print(f"\nsummary: timing, max_dim 1 unless stated, M={M} N={N} K={K}")
    print("(ms: median of single calls, each between its own events; loop: back-to-back calls, per call)")
    print(f"{'what':34s} {'dtype':5s} {'kernel':18s} {'ms':>9s} {'x eager':>8s} {'x compile':>9s} "
          f"{'loop ms':>9s} {'x eager':>8s} {'x compile':>9s}")
    for r in timing:
        print(f"{r['what']:34s} {r['dtype']:5s} {r.get('kernel', '-'):18s} {fmt(r['ms']):>9s} "
              f"{fmt(r.get('x_eager')):>8s} {fmt(r.get('x_compile')):>9s} {fmt(r.get('loop_ms')):>9s} "
              f"{fmt(r.get('x_eager_loop')):>8s} {fmt(r.get('x_compile_loop')):>9s}"
              f"{'  ' + r['error'] if r['error'] else ''}")
    print(f"\nRESULT: {'PASS' if not failures else 'FAIL'} ({len(checks) - len(failures)} of {len(checks)} checks pass"
          f"{', ' + str(len(failures)) + ' failures' if failures else ''})")
    for new in news.values():  # destroy plans while CUDA is certainly alive (not at interpreter exit)
        new.release_plans()
    if args.out_json:
        with open(args.out_json, "w") as f:
            json.dump({"meta": meta, "correctness": rows, "timing": timing, "pass": not failures}, f, indent=1,
                      default=str)
        print(f"wrote {args.out_json}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
