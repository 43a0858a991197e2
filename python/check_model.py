#!/usr/bin/env python3
"""check_model.py: ModelNew (libmaxgemm from PyTorch) against the reference Model on a GPU, then timed against eager
and torch.compile.

Sections (every check is pass/fail; any failure makes the exit status 1):
  correctness  for max_dim in (1, 0), dtype in (float32, bfloat16), max_dim 1 with the short-circuit on and off:
               fp32 vs an fp64 evaluation of the same Model (atol = rtol = 1e-4), bf16 vs the fp64 Model on the
               bf16-rounded weights and inputs (1e-2), NaN exactly where the reference has NaN, shape and dtype.
               Cases: --seeds inputs (one ModelNew per (max_dim, dtype), reused through load_state_dict), planted
               NaN / +inf / -inf in x, NaN in W, +inf in b, a non-contiguous x, an x one element off 16-byte
               alignment (the binding copies it: kernel 4 refuses such a base).
  api          the errors ModelNew and the op must raise (python/README.md).
  batch        one module, batch sizes M, 1, 7, M/2+1: one plan of capacity M serves them all (mg_forward_rows),
               no new plan, no weight re-set; a module first called with a small batch grows its plan.
  weights      in-place updates under no_grad (mul_, add_, a planted NaN in W that the max_dim 1 short-circuit must
               see) are picked up without help; writes through .data after refresh_weights(); no re-set otherwise.
  graph        CUDA graph capture after a warm-up, replayed with new inputs copied into the static input (a NaN /
               inf input included), bit-identical to eager calls; a smaller batch captured on the same plan;
               capture without warm-up and after a weight change raise MaxgemmError; a weight change after capture
               makes a new plan and the old graph still replays.
  compile      torch.compile(ModelNew, fullgraph=True) bit-identical to eager ModelNew at M and at a second batch
               size (dynamic batch), a model holding ModelNew between torch ops, mode="reduce-overhead" (inductor's
               CUDA graphs) bit-identical to eager.
  autograd     ModelNew's gradients (x, W, b) against torch's autograd of the Model, eager and compiled.
  timing       CUDA events, warm-up, median of --reps >= 20, warm L2, max_dim 1: eager Model, torch.compile(Model),
               ModelNew with the short-circuit off and on, compiled ModelNew, ModelNew at max_dim 0 and its CUDA
               graph replay, each for float32 and bfloat16, with speedups over eager and torch.compile.

Usage (repository root, after `make build/libmaxgemm.so`; or with the package installed):
    python3 python/check_model.py [--batch 1024 --in 8192 --out 8192] [--kernel auto] [--quick] [--no-compile]
                                  [--reps 20] [--out-json results.json]
--quick: 2 seeds instead of 5 and no torch.compile (the compile section and the compiled timing rows are skipped).
Prints a human summary, then one line of JSON (the summary) last. Exit status: 0 all checks pass, 1 a check failed,
2 no GPU.
"""

import argparse
import copy
import datetime
import json
import math
import statistics
import sys
import time

import torch
from torch import nn

# python/, this script's directory, is first on sys.path: the source tree's package (a copy of the script elsewhere
# tests the installed one).
import maxgemm_torch
from maxgemm_torch import MaxgemmError, ModelNew


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
T0 = time.monotonic()


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


def same(a, b):
    """Bit-identical values (NaN where NaN): two runs of the same library computation."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    na, nb = torch.isnan(a), torch.isnan(b)
    return bool(torch.equal(na, nb)) and bool(torch.equal(a.masked_fill(na, 0), b.masked_fill(nb, 0)))


def reference(x, w, b, max_dim):
    """The Model in fp64 on exactly these values (bf16 tensors widen exactly)."""
    y = torch.nn.functional.linear(x.double(), w.double(), None if b is None else b.double())
    m = torch.max(y, dim=max_dim, keepdim=True).values
    return torch.nn.functional.gelu(m - m.mean(dim=1, keepdim=True))


def kernel_of(new, dtype):
    for p in new.plan_info():
        if not p["retired"] and p["dtype"] == str(dtype).replace("torch.", ""):
            return f'{p["kernel"]}:{p["kernel_name"]}'
    return "-"


def live_plans(new, dtype):
    return [p for p in new.plan_info() if not p["retired"] and p["dtype"] == str(dtype).replace("torch.", "")]


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    return f"{v:.3g}" if (v == 0 or 1e-3 <= abs(v) < 1e4) else f"{v:.2e}"


def record(rows, section, name, ok, error=None, **detail):
    """One pass/fail row of the sections after correctness."""
    row = {"case": section, "name": name, "ok": bool(ok), "error": None if ok else (error or "failed")}
    row.update(detail)
    rows.append(row)
    extra = " ".join(f"{k}={fmt(v) if isinstance(v, float) else v}" for k, v in detail.items())
    print(f"  {section}: {name:58s} -> {'ok' if ok else 'FAIL  ' + row['error']}{'  ' + extra if extra else ''}",
          flush=True)
    return ok


def guarded(rows, section, name, fn):
    """Runs one check; an exception is a failed row (the rest of the run goes on)."""
    try:
        fn()
    except Exception as e:
        record(rows, section, name, False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


def stamp(what):
    print(f"{what} [{time.monotonic() - T0:.0f} s]", flush=True)


# ---- correctness ---------------------------------------------------------------------------------------------------
def offset_view(t):
    """t's values in a contiguous view one element into a new buffer: a base that is not 16-byte aligned."""
    buf = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    buf[1:].copy_(t.reshape(-1))
    return buf[1:].view(t.shape)


def check_case(name, seed, model, x, news, rows, noncontig=False, offset=False):
    """Every (max_dim, dtype, shortcut) of one (model, x) pair against the fp64 Model; noncontig: x passed as a
    transposed view, offset: as a contiguous view whose base is one element off 16-byte alignment."""
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
            xnew = xin.t().contiguous().t() if noncontig else offset_view(xin) if offset else xin
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
                    elif not row["ok"]:
                        row["error"] = f"{res['n_bad']} values outside the bar"
                    row["kernel"] = kernel_of(new, dtype)
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


# ---- api -----------------------------------------------------------------------------------------------------------
def api_checks(M, K, N, dev, news, rows):
    """The errors ModelNew and the op promise (python/README.md)."""
    def expect(name, exc, fn, text=None):
        try:
            fn()
            record(rows, "api", name, False, f"no exception (expected {exc.__name__})")
        except exc as e:
            ok = text is None or text in str(e)
            record(rows, "api", name, ok, f"message lacks {text!r}: {e}", detail=f"{type(e).__name__}: {e}"[:160])
        except Exception as e:
            record(rows, "api", name, False, f"expected {exc.__name__}, got {type(e).__name__}: {e}")

    f32 = news[(1, "fp32")]
    w, b = f32.gemm.weight, f32.gemm.bias
    x = torch.rand(max(M, 1), K, device=dev)
    expect("max_dim=2 rejected at construction", ValueError, lambda: ModelNew(K, N, 2))
    expect("unknown kernel rejected at construction", ValueError, lambda: ModelNew(K, N, 1, kernel="no_such_kernel"))
    expect("unknown option rejected at construction", ValueError, lambda: ModelNew(K, N, 1, options={"tiles": "x"}))
    expect("CPU input rejected", TypeError, lambda: f32(x.cpu()))
    expect("op: CPU tensors rejected", TypeError,
           lambda: torch.ops.maxgemm.forward(x.cpu(), w.detach().cpu(), b.detach().cpu(), 1, "auto", -1, True, 0))
    expect("wrong in_features rejected", ValueError, lambda: f32(torch.rand(2, K + 1, device=dev)))
    expect("1-D input rejected", ValueError, lambda: f32(torch.rand(K, device=dev)))
    expect("float64 input rejected", TypeError, lambda: f32(x.double()))
    expect("bf16 input to fp32 parameters rejected", TypeError, lambda: f32(x.to(torch.bfloat16)))
    expect("precision bf16 with float32 input rejected", TypeError,
           lambda: maxgemm_torch.forward(x, w.detach(), b.detach(), 1, precision="bf16"))
    # M = 0: torch gives (0, 1) for max_dim 1 and an error for max_dim 0 ("max on a tensor with no elements").
    empty = torch.empty(0, K, device=dev)
    out = f32(empty)
    ok = tuple(out.shape) == (0, 1) and out.dtype == torch.float32
    record(rows, "api", "M=0, max_dim 1 gives an empty (0, 1)", ok, f"got shape {tuple(out.shape)} {out.dtype}")
    expect("M=0, max_dim 0 raises like torch", RuntimeError, lambda: news[(0, "fp32")](empty))
    # N = 0: torch gives (1, 0) for max_dim 0 and an error for max_dim 1
    w0, b0 = torch.empty(0, K, device=dev), torch.empty(0, device=dev)
    out = maxgemm_torch.forward(x, w0, b0, 0)
    ok = tuple(out.shape) == (1, 0) and out.dtype == torch.float32
    record(rows, "api", "N=0, max_dim 0 gives an empty (1, 0)", ok, f"got shape {tuple(out.shape)} {out.dtype}")
    expect("N=0, max_dim 1 raises like torch", RuntimeError, lambda: maxgemm_torch.forward(x, w0, b0, 1))
    v = maxgemm_torch.version()
    record(rows, "api", "version() is the library's MAJOR.MINOR.PATCH", len(v.split(".")) == 3, f"got {v!r}",
           version=v)


# ---- batch sizes: one plan, mg_forward_rows ------------------------------------------------------------------------
def batch_checks(M, K, N, dev, news, base_model, base_x, rows):
    state = base_model.state_dict()
    sizes = sorted({M, 1, min(7, M), M // 2 + 1}, reverse=True)
    for md in (1, 0):
        for dname, dtype in DTYPES.items():
            new = news[(md, dname)]
            new.load_state_dict(state)
            x = base_x.to(dtype)
            w, b = new.gemm.weight, new.gemm.bias

            def run_sizes():
                new(x)  # the plan of capacity M, weights set
                before = live_plans(new, dtype)
                worst, bad = 0.0, []
                for m in sizes + [M]:
                    for sc in ((True, False) if md == 1 else (None,)):
                        if sc is not None:
                            new.shortcut = sc
                        res = compare(new(x[:m]), reference(x[:m], w, b, md), BARS[dname])
                        worst = max(worst, res["worst_over_bar"] or 0.0)
                        if not res["ok"]:
                            bad.append(f"m={m} shortcut {sc}")
                new.shortcut = True
                after = live_plans(new, dtype)
                one_plan = len(before) == len(after) == 1 and after[0]["capacity"] == M and \
                    after[0]["weight_sets"] == before[0]["weight_sets"]
                record(rows, "batch", f"max_dim {md} {dname}: batches {sizes} on one plan", not bad and one_plan,
                       f"outside the bar: {bad}" if bad else f"plans before {before}, after {after}",
                       worst_over_bar=worst, capacity=after[0]["capacity"] if after else None,
                       kernel=kernel_of(new, dtype))
            guarded(rows, "batch", f"max_dim {md} {dname}: batches on one plan", run_sizes)

    def growth():
        with torch.device(dev):
            g = ModelNew(K, N, 0)
        g.load_state_dict(state)
        small = min(3, M)
        outs = [(small, g(base_x[:small])), (M, g(base_x)), (small, g(base_x[:small]))]
        bad = [m for m, out in outs
               if not compare(out, reference(base_x[:m], g.gemm.weight, g.gemm.bias, 0), BARS["fp32"])["ok"]]
        plans = live_plans(g, torch.float32)
        ok = not bad and len(plans) == 1 and plans[0]["capacity"] == M
        record(rows, "batch", f"a plan made for {small} rows grows to {M} and serves {small} again", ok,
               f"bad batches {bad}, plans {plans}", kernel=kernel_of(g, torch.float32))
        g.release_plans()
    guarded(rows, "batch", "plan growth", growth)


# ---- in-place weight updates ---------------------------------------------------------------------------------------
def weight_checks(news, base_model, base_x, rows):
    state = base_model.state_dict()
    for dname, dtype in DTYPES.items():
        x = base_x.to(dtype)
        bar = BARS[dname]

        def updates():
            new = news[(0, dname)]
            new.load_state_dict(state)
            w, b = new.gemm.weight, new.gemm.bias
            new(x)
            sets0 = live_plans(new, dtype)[0]["weight_sets"]
            new(x)
            record(rows, "weights", f"{dname}: no mg_set_weights without a change",
                   live_plans(new, dtype)[0]["weight_sets"] == sets0, "weights were re-set")
            with torch.no_grad():
                w.mul_(0.5)
                b.add_(0.25)
            res = compare(new(x), reference(x, w, b, 0), bar)
            resets = live_plans(new, dtype)[0]["weight_sets"] - sets0
            record(rows, "weights", f"{dname}: weight.mul_ / bias.add_ under no_grad seen (one re-set)",
                   res["ok"] and resets == 1, f"{res['n_bad']} values outside the bar, {resets} re-sets",
                   worst_over_bar=res["worst_over_bar"])
            w.data.mul_(2.0)  # .data: torch's version counter does not move, refresh_weights() says so
            new.refresh_weights()
            res = compare(new(x), reference(x, w, b, 0), bar)
            record(rows, "weights", f"{dname}: weight.data.mul_ seen after refresh_weights()", res["ok"],
                   f"{res['n_bad']} values outside the bar", worst_over_bar=res["worst_over_bar"])
            new.load_state_dict(state)

            new1 = news[(1, dname)]
            new1.load_state_dict(state)
            w1, b1 = new1.gemm.weight, new1.gemm.bias
            new1(x)  # the short-circuit's weight statistics, finite W
            with torch.no_grad():
                w1[5 % w1.shape[0], 9 % w1.shape[1]] = math.nan
            out = new1(x)
            res = compare(out, reference(x, w1, b1, 1), bar)
            record(rows, "weights", f"{dname}: NaN planted in W in place, max_dim 1 short-circuit sees it",
                   res["ok"] and bool(torch.isnan(out).all()), f"nan_match {res['nan_match']}")
            new1.load_state_dict(state)
        guarded(rows, "weights", f"{dname}: in-place updates", updates)


# ---- CUDA graphs ---------------------------------------------------------------------------------------------------
def capture(fn, static_x):
    """torch's recipe: warm up on a side stream (ModelNew makes its plan and sets the weights there), then capture."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn(static_x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = fn(static_x)
    return g, static_out


def graph_checks(M, K, N, dev, news, base_model, base_x, rows):
    state = base_model.state_dict()
    gen = torch.Generator(device=dev).manual_seed(1234)
    nonfinite = base_x.clone()
    nonfinite[3 % M, 5 % K] = math.nan
    nonfinite[7 % M, 100 % K] = math.inf
    inputs = [torch.rand(M, K, device=dev, generator=gen), nonfinite, torch.rand(M, K, device=dev, generator=gen)]
    for md in (1, 0):
        for dname, dtype in DTYPES.items():
            new = news[(md, dname)]

            def replay():
                new.load_state_dict(state)
                static_x = base_x.to(dtype).clone()
                g, static_out = capture(new, static_x)
                bad, worst = [], 0.0
                for i, xi in enumerate(inputs):
                    xi = xi.to(dtype)
                    static_x.copy_(xi)
                    g.replay()
                    replayed = static_out.clone()
                    eager = new(xi)
                    res = compare(replayed, reference(xi, new.gemm.weight, new.gemm.bias, md), BARS[dname])
                    worst = max(worst, res["worst_over_bar"] or 0.0)
                    if not same(replayed, eager) or not res["ok"]:
                        bad.append(f"input {i}: bit-identical {same(replayed, eager)}, bar ok {res['ok']}")
                captured = any(p["captured"] for p in live_plans(new, dtype))
                record(rows, "graph", f"max_dim {md} {dname}: capture, replay {len(inputs)} new inputs",
                       not bad and captured, "; ".join(bad) or "the plan is not marked captured",
                       worst_over_bar=worst)

                m2 = M // 2 + 1
                static_small = base_x[:m2].to(dtype).clone()
                g2, out2 = capture(new, static_small)
                static_small.copy_(inputs[2][:m2].to(dtype))
                g2.replay()
                eager = new(inputs[2][:m2].to(dtype))
                plans = live_plans(new, dtype)
                record(rows, "graph", f"max_dim {md} {dname}: a batch of {m2} captured on the capacity-{M} plan",
                       same(out2, eager) and len(plans) == 1 and plans[0]["capacity"] == M,
                       f"bit-identical {same(out2, eager)}, plans {[(p['capacity'], p['captured']) for p in plans]}")

                # After a weight change the module makes a new plan; the graph keeps its own and still replays.
                with torch.no_grad():
                    new.gemm.weight.mul_(0.5)
                x0 = inputs[0].to(dtype)
                res = compare(new(x0), reference(x0, new.gemm.weight, new.gemm.bias, md), BARS[dname])
                g.replay()
                torch.cuda.synchronize()
                retired = [p for p in new.plan_info() if p["retired"]]
                record(rows, "graph", f"max_dim {md} {dname}: weights changed after capture: eager sees them, "
                       f"the graph still replays", res["ok"] and len(retired) == 1,
                       f"bar ok {res['ok']}, retired plans {len(retired)}")
                del g, g2, static_out, out2
                new.release_plans()  # the graphs are gone: free the retired plan
                new.load_state_dict(state)
            guarded(rows, "graph", f"max_dim {md} {dname}: capture and replay", replay)

    def refusals():
        with torch.device(dev):
            fresh = ModelNew(K, N, 0)
        fresh.load_state_dict(state)
        static_x = base_x.clone()
        for what, prepare, text in (("without a warm-up", lambda: None, "warm-up"),
                                    ("after a weight change", lambda: fresh.gemm.bias.add_(1.0), "weights changed")):
            if what != "without a warm-up":
                fresh(static_x)
                torch.cuda.synchronize()
                with torch.no_grad():
                    prepare()
            try:
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    fresh(static_x)
                record(rows, "graph", f"capture {what} raises MaxgemmError", False, "no exception")
            except MaxgemmError as e:
                record(rows, "graph", f"capture {what} raises MaxgemmError", text in str(e), f"message: {e}")
            torch.cuda.synchronize()
        out = fresh(static_x)  # the module still works after the refused captures
        res = compare(out, reference(static_x, fresh.gemm.weight, fresh.gemm.bias, 0), BARS["fp32"])
        record(rows, "graph", "the module works after refused captures", res["ok"], "outside the bar")
        fresh.release_plans()
    guarded(rows, "graph", "capture refusals", refusals)


# ---- torch.compile -------------------------------------------------------------------------------------------------
class Holder(nn.Module):
    """A model containing ModelNew between torch ops."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x * 0.5 + 0.25) * 2.0 + 1.0


class RecordingInductor:
    """inductor (torch.compile's default backend), recording the graphs dynamo hands it: a check then knows that the
    op was compiled as one node, not run by an eager fallback."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx
        self.graphs.append(gm)
        return compile_fx(gm, example_inputs)

    def op_nodes(self):
        return sum(n.op == "call_function" and n.target == torch.ops.maxgemm.forward.default
                   for gm in self.graphs for n in gm.graph.nodes)


def compile_checks(M, news, base_model, base_x, rows):
    state = base_model.state_dict()
    m2 = M // 2 + 1
    for md in (1, 0):
        for dname, dtype in DTYPES.items():
            new = news[(md, dname)]

            def fullgraph():
                new.load_state_dict(state)
                torch._dynamo.reset()
                backend = RecordingInductor()
                compiled = torch.compile(new, fullgraph=True, backend=backend)
                for m in (M, m2):  # the second batch size recompiles with a dynamic batch
                    x = base_x[:m].to(dtype)
                    out_c, out_e = compiled(x), new(x)
                    record(rows, "compile", f"max_dim {md} {dname}: fullgraph, batch {m}, equal to eager",
                           same(out_c, out_e) and backend.op_nodes() >= 1,
                           f"bit-identical {same(out_c, out_e)}, op nodes compiled {backend.op_nodes()}",
                           graphs=len(backend.graphs))
            guarded(rows, "compile", f"max_dim {md} {dname}: fullgraph", fullgraph)

    def holder():
        new = news[(0, "fp32")]
        new.load_state_dict(state)
        h = Holder(new)
        torch._dynamo.reset()
        backend = RecordingInductor()
        compiled = torch.compile(h, fullgraph=True, backend=backend)
        x = base_x
        res = compare(compiled(x), h(x), BARS["fp32"])  # inductor may fuse x * 0.5 + 0.25 with an FMA: not bitwise
        record(rows, "compile", "a model holding ModelNew, fullgraph, against eager",
               res["ok"] and backend.op_nodes() == 1,
               f"{res['n_bad']} outside the bar, op nodes {backend.op_nodes()}", worst_over_bar=res["worst_over_bar"])
    guarded(rows, "compile", "a model holding ModelNew", holder)

    for md, dname in ((1, "fp32"), (0, "bf16")):
        def cudagraphs(md=md, dname=dname):
            new = news[(md, dname)]
            new.load_state_dict(state)
            dtype = DTYPES[dname]
            torch._dynamo.reset()
            counters = torch._dynamo.utils.counters["inductor"]
            skips = counters["cudagraph_skips"]
            compiled = torch.compile(new, mode="reduce-overhead", fullgraph=True)
            gen = torch.Generator(device=base_x.device).manual_seed(99)
            bad = []
            for i in range(4):  # warm-up, record, then replays of inductor's graph, each with new values
                x = torch.rand(base_x.shape, device=base_x.device, generator=gen).to(dtype)
                out_c = compiled(x).clone()  # the next replay overwrites the graph's output
                if not same(out_c, new(x)):
                    bad.append(i)
            skipped = counters["cudagraph_skips"] - skips
            captured = any(p["captured"] for p in new.plan_info())
            record(rows, "compile", f"max_dim {md} {dname}: mode='reduce-overhead' (CUDA graphs) equal to eager",
                   not bad and not skipped and captured,
                   f"calls {bad} differ, cudagraph skips {skipped}, plan captured {captured}")
            del compiled
            torch._dynamo.reset()  # drops inductor's graphs before the module's plans are released
            new.release_plans()
        guarded(rows, "compile", f"max_dim {md} {dname}: reduce-overhead", cudagraphs)


# ---- autograd ------------------------------------------------------------------------------------------------------
def autograd_checks(M, K, N, dev, rows, compile_on):
    """ModelNew's backward is the Model's gradient (recomputed with torch ops): eager, and compiled."""
    Ma, Ka, Na = min(M, 256), min(K, 1024), min(N, 512)
    torch.manual_seed(7)
    with torch.device(dev):
        base = Model(Ka, Na, 0)
    x0 = torch.rand(Ma, Ka, device=dev)
    x_nan = x0.clone()
    x_nan[3 % Ma, 5 % Ka] = math.nan
    for md in (1, 0):
        for dname, dtype in DTYPES.items():
            def grads(md=md, dname=dname, dtype=dtype):
                ref = copy.deepcopy(base).to(dtype)
                ref.max_dim = md
                with torch.device(dev):
                    new = ModelNew(Ka, Na, md).to(dtype)
                new.load_state_dict(ref.state_dict())
                for case, xsrc in (("finite", x0), ("NaN in x", x_nan)):
                    xr = xsrc.to(dtype).clone().requires_grad_(True)  # two leaves: grads must not mix
                    xn = xsrc.to(dtype).clone().requires_grad_(True)
                    with torch.enable_grad():
                        out_r, out_n = ref(xr), new(xn)
                        g = torch.randn_like(out_r)
                        out_r.backward(g)
                        out_n.backward(g)
                    out_64 = reference(xsrc.to(dtype), ref.gemm.weight, ref.gemm.bias, md)
                    pairs = {"out": (out_n, out_64), "x": (xn.grad, xr.grad), "W": (new.gemm.weight.grad,
                             ref.gemm.weight.grad), "b": (new.gemm.bias.grad, ref.gemm.bias.grad)}
                    res = {k: compare(a, b, BARS[dname]) for k, (a, b) in pairs.items()}
                    exact = all(same(a, b) for k, (a, b) in pairs.items() if k != "out")
                    record(rows, "autograd", f"max_dim {md} {dname} {case}: output vs fp64, grads vs Model autograd",
                           all(r["ok"] for r in res.values()),
                           ", ".join(f"{k} {r['n_bad']} bad" for k, r in res.items() if not r["ok"]),
                           grads_bit_identical=exact)
                    for p in list(ref.parameters()) + list(new.parameters()):
                        p.grad = None
                new.release_plans()
            guarded(rows, "autograd", f"max_dim {md} {dname}: grads", grads)

    if compile_on:
        def compiled_training():
            ref = copy.deepcopy(base)
            with torch.device(dev):
                new = ModelNew(Ka, Na, 0)
            new.load_state_dict(ref.state_dict())
            torch._dynamo.reset()
            compiled = torch.compile(new, fullgraph=True)
            xr, xn = x0.clone().requires_grad_(True), x0.clone().requires_grad_(True)
            with torch.enable_grad():
                out_r, out_n = ref(xr), compiled(xn)
                g = torch.randn_like(out_r)
                out_r.backward(g)
                out_n.backward(g)
            pairs = {"x": (xn.grad, xr.grad), "W": (new.gemm.weight.grad, ref.gemm.weight.grad),
                     "b": (new.gemm.bias.grad, ref.gemm.bias.grad)}
            res = {k: compare(a, b, BARS["fp32"]) for k, (a, b) in pairs.items()}
            record(rows, "autograd", "max_dim 0 fp32: compiled (fullgraph) forward + backward vs Model autograd",
                   all(r["ok"] for r in res.values()), ", ".join(f"{k} {r['n_bad']} bad" for k, r in res.items()))
            new.release_plans()
        guarded(rows, "autograd", "compiled training", compiled_training)


# ---- timing --------------------------------------------------------------------------------------------------------
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
    print(f"  {what:36s} {dname}  {fmt(row['ms'])} ms (in a loop: {fmt(row['loop_ms'])} ms/call, host "
          f"{fmt(row['host_us'])} us/call)"
          f"{'  ' + row['error'] if row['error'] else ''}", flush=True)
    return row


def timing_rows(news, base_model, base_x, args, compile_on):
    timing = []
    state = base_model.state_dict()
    for new in news.values():
        new.load_state_dict(state)
    new_shortcut_default(news)
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
        benches = [("ModelNew max_dim 1 shortcut off", new1, lambda: run_new(False)),
                   ("ModelNew max_dim 1 shortcut on", new1, lambda: run_new(True))]
        if compile_on:
            new1_c = torch.compile(new1, fullgraph=True)
            benches.append(("compiled ModelNew max_dim 1 sc on", new1, lambda: new1_c(x)))
        benches.append(("ModelNew max_dim 0", new0, lambda: new0(x)))
        static_x = x.clone()
        graph = None
        try:
            graph, _ = capture(new0, static_x)
            benches.append(("ModelNew max_dim 0 CUDA graph replay", new0, graph.replay))
        except Exception as e:
            print(f"  (no graph replay row: {type(e).__name__}: {e})")
        for label, owner, fn in benches:
            row = bench(label, dname, fn, args.reps, args.warmup)
            row["kernel"] = kernel_of(owner, dtype)
            row["must_pass"] = True  # a ModelNew that cannot run is a failure; eager/compile rows are baselines
            group.append(row)
        benches.clear()  # holds graph.replay: the graph goes before the plans it uses
        del graph
        new0.release_plans()
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
    return timing


# ---- main ----------------------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description="ModelNew (libmaxgemm) against the reference Model: accuracy against "
                                             "fp64, NaN/inf cases, API errors, batch sizes, weight updates, CUDA "
                                             "graphs, torch.compile, autograd, then timing against eager and "
                                             "torch.compile.")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--in", dest="in_features", type=int, default=8192)
    ap.add_argument("--out", dest="out_features", type=int, default=8192)
    ap.add_argument("--kernel", default="auto", help="ModelNew kernel: auto, a registry name or number")
    ap.add_argument("--quick", action="store_true", help="2 seeds instead of 5, no torch.compile")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile (checks and timing rows)")
    ap.add_argument("--reps", type=int, default=20, help="timed runs per row (median reported); at least 20")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--out-json", default=None, help="write every result row and the environment as JSON here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("check_model: no CUDA device; ModelNew runs on CUDA only", file=sys.stderr)
        print(json.dumps({"result": "NO_GPU", "pass": False}))
        return 2
    args.reps = max(args.reps, 20)
    M, K, N = args.batch, args.in_features, args.out_features
    if min(M, K, N) < 1:
        ap.error("--batch, --in and --out must be at least 1")
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default: the eager fp32 baseline is exact SGEMM
    torch.set_grad_enabled(False)  # inference, as a serving loop runs it; the autograd section turns it on
    torch._dynamo.config.cache_size_limit = 64  # many ModelNew instances compile the same forward
    seeds = list(range(2 if args.quick else 5))
    compile_on = not (args.quick or args.no_compile)
    meta = {"gpu": torch.cuda.get_device_name(dev), "capability": list(torch.cuda.get_device_capability(dev)),
            "torch": torch.__version__, "cuda": torch.version.cuda, "library": maxgemm_torch.library_path(),
            "library_version": maxgemm_torch.version(), "package": maxgemm_torch.__file__,
            "M": M, "N": N, "K": K, "kernel": args.kernel, "seeds": seeds, "reps": args.reps, "compile": compile_on,
            "allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "date": datetime.datetime.now().isoformat(timespec="seconds")}
    print(f"check_model: {meta['gpu']}, torch {meta['torch']} (CUDA {meta['cuda']}), M={M} N={N} K={K}, "
          f"kernel {args.kernel}, library {meta['library']} ({meta['library_version']})", flush=True)

    # One ModelNew per (max_dim, dtype), parameters created on the GPU, reused for every case.
    news = {}
    for md in (1, 0):
        for dname, dtype in DTYPES.items():
            with torch.device(dev):
                news[(md, dname)] = ModelNew(K, N, md, kernel=args.kernel).to(dtype)

    rows = []
    stamp("correctness:")
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
    check_case("offset_x", seeds[0], base_model, base_x, news, rows, offset=True)

    stamp("api:")
    api_checks(M, K, N, dev, news, rows)
    stamp("batch sizes (one plan, mg_forward_rows):")
    batch_checks(M, K, N, dev, news, base_model, base_x, rows)
    stamp("in-place weight updates:")
    weight_checks(news, base_model, base_x, rows)
    stamp("CUDA graphs:")
    graph_checks(M, K, N, dev, news, base_model, base_x, rows)
    if compile_on:
        stamp("torch.compile:")
        compile_checks(M, news, base_model, base_x, rows)
    stamp("autograd:")
    autograd_checks(M, K, N, dev, rows, compile_on)
    stamp(f"timing (median of {args.reps}, warm L2):")
    timing = timing_rows(news, base_model, base_x, args, compile_on)

    # Summary.
    checks = rows + [r for r in timing if r.get("must_pass")]
    failures = [r for r in rows if not r["ok"]] + [r for r in timing if r.get("must_pass") and r["error"]]
    print("\nsummary: correctness")
    print(f"{'case':12s} {'seed':>4s} {'dim':>3s} {'dtype':5s} {'sc':3s} {'kernel':18s} {'max_abs':>9s} "
          f"{'worst/bar':>9s} {'nan':5s} {'eager_abs':>9s} result")
    for r in rows:
        if "seed" not in r:
            continue
        print(f"{r['case']:12s} {r['seed']:4d} {r['max_dim']:3d} {r['dtype']:5s} {r['shortcut']:3s} "
              f"{r.get('kernel', '-'):18s} {fmt(r.get('max_abs_err')):>9s} {fmt(r.get('worst_over_bar')):>9s} "
              f"{str(r.get('nan_match', '-')):5s} {fmt(r.get('eager_max_abs_err')):>9s} "
              f"{'ok' if r['ok'] else 'FAIL ' + (r['error'] or '')}")
    sections = {}
    for r in rows:
        sec = "correctness" if "seed" in r else r["case"]
        n_ok, n = sections.get(sec, (0, 0))
        sections[sec] = (n_ok + r["ok"], n + 1)
    for sec, (n_ok, n) in sections.items():
        print(f"{sec} checks: {n_ok}/{n} pass")
    for r in failures:
        print(f"  FAIL {r.get('case', r.get('what'))}: {r.get('name', r.get('what', ''))}: {r['error']}")
    print(f"\nsummary: timing, max_dim 1 unless stated, M={M} N={N} K={K}")
    print("(ms: median of single calls, each between its own events; loop: back-to-back calls, per call)")
    print(f"{'what':36s} {'dtype':5s} {'kernel':18s} {'ms':>9s} {'x eager':>8s} {'x compile':>9s} "
          f"{'loop ms':>9s} {'x eager':>8s} {'x compile':>9s} {'host us':>8s}")
    for r in timing:
        print(f"{r['what']:36s} {r['dtype']:5s} {r.get('kernel', '-'):18s} {fmt(r['ms']):>9s} "
              f"{fmt(r.get('x_eager')):>8s} {fmt(r.get('x_compile')):>9s} {fmt(r.get('loop_ms')):>9s} "
              f"{fmt(r.get('x_eager_loop')):>8s} {fmt(r.get('x_compile_loop')):>9s} {fmt(r.get('host_us')):>8s}"
              f"{'  ' + r['error'] if r['error'] else ''}")
    elapsed = time.monotonic() - T0
    print(f"\nRESULT: {'PASS' if not failures else 'FAIL'} ({len(checks) - len(failures)} of {len(checks)} checks pass"
          f"{', ' + str(len(failures)) + ' failures' if failures else ''}) in {elapsed:.0f} s")
    for new in news.values():  # destroy plans while CUDA is certainly alive (not at interpreter exit)
        new.release_plans()
    if args.out_json:
        with open(args.out_json, "w") as f:
            json.dump({"meta": meta, "correctness": rows, "timing": timing, "pass": not failures}, f, indent=1,
                      default=str)
        print(f"wrote {args.out_json}")
    summary = {"result": "PASS" if not failures else "FAIL", "pass": not failures, "checks": len(checks),
               "failed": len(failures), "elapsed_s": round(elapsed, 1),
               "sections": {sec: f"{n_ok}/{n}" for sec, (n_ok, n) in sections.items()},
               "failures": [f"{r.get('case', r.get('what'))}: {r.get('name', '')} {r['error']}"[:200]
                            for r in failures],
               "timing": [{"what": r["what"], "dtype": r["dtype"], "ms": r["ms"], "loop_ms": r["loop_ms"],
                           "host_us": r["host_us"], "x_eager": r.get("x_eager"), "x_compile": r.get("x_compile")}
                          for r in timing],
               "meta": {k: meta[k] for k in ("gpu", "torch", "library", "library_version", "M", "N", "K", "kernel")}}
    print(json.dumps(summary, default=str))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
