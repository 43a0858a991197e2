#!/usr/bin/env python3
"""test_cpu.py: maxgemm_torch's tests that need no GPU (python/test_install.sh runs them against the installed
package; `python3 python/test_cpu.py` runs them against the source tree).

  - the package: import, the op's schema, the library's search order, version();
  - no CUDA device: ModelNew, forward() and the op itself raise MaxgemmError "maxgemm: no CUDA device ..." (status 7);
  - argument errors at construction and per call;
  - the backward: reference_grads against torch's autograd of the reference Model, bit for bit, with NaN/inf;
  - the op under torch.compile(fullgraph=True) (dynamo + AOTAutograd + inductor) and autograd, with the op's body
    replaced by the Model in torch ops on the CPU (the library needs CUDA): traces as one node, no graph break,
    same outputs and gradients as eager; eager calls skip the dispatcher unless autograd or tracing needs it;
  - PlanCache over a recording stand-in for libmaxgemm: one plan per key sized for the largest batch
    (mg_forward_rows with each batch's m), weights re-set only when data_ptr or the version counter changes,
    refresh_weights, LRU, options, capture rules (no allocation under capture, captured plans pinned and retired).
Prints "N passed, N failed" last; exit status 0 when all pass.
"""

import copy
import math
import os
import sys
import unittest
from unittest import mock

import torch
from torch import nn

# This script's directory comes first on sys.path: python/test_cpu.py tests the source tree's package, a copy of it
# elsewhere (test_install.sh) the installed one.
import maxgemm_torch
from maxgemm_torch import _library as L, _ops, _plans


class Model(nn.Module):
    """The reference model (SEMANTICS.md)."""

    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        return torch.nn.functional.gelu(x)


def same(a, b):
    """Bitwise-equal values, NaN where NaN."""
    return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(torch.isnan(a), torch.isnan(b))) and \
        bool(torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0)))


HAVE_LIB = maxgemm_torch.library_path() is not None


class Package(unittest.TestCase):
    def test_op_registered(self):
        schema = str(torch.ops.maxgemm.forward.default._schema)
        self.assertTrue(schema.startswith("maxgemm::forward(Tensor x, Tensor weight, Tensor? bias,"), schema)
        self.assertEqual(maxgemm_torch.OP_NAME, "maxgemm::forward")

    def test_search_order(self):
        with mock.patch.dict(os.environ, {"MAXGEMM_LIB": "/nonexistent/libmaxgemm.so"}):
            self.assertEqual(L.library_candidates(), ["/nonexistent/libmaxgemm.so"])
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("MAXGEMM_LIB", None)
            pkg = os.path.dirname(os.path.abspath(maxgemm_torch.__file__))
            self.assertEqual(L.library_candidates(), [
                os.path.join(pkg, "libmaxgemm.so"),
                os.path.normpath(os.path.join(pkg, "..", "..", "build", "libmaxgemm.so"))])

    def test_missing_library_is_a_clear_oserror(self):
        with mock.patch.dict(os.environ, {"MAXGEMM_LIB": "/nonexistent/libmaxgemm.so"}), \
                mock.patch.object(L, "_lib", None):
            with self.assertRaisesRegex(OSError, "cannot load libmaxgemm: tried /nonexistent/libmaxgemm.so "
                                                 r"\(not found\).*make build/libmaxgemm.so"):
                L.load_library()

    @unittest.skipUnless(HAVE_LIB, "libmaxgemm.so not built")
    def test_version(self):
        v = maxgemm_torch.version()
        self.assertRegex(v, r"^\d+\.\d+\.\d+$")
        self.assertEqual(maxgemm_torch.parse_kernel("naive"), 1)
        with self.assertRaises(ValueError):
            maxgemm_torch.parse_kernel("no_such_kernel")


@unittest.skipIf(torch.cuda.is_available(), "a CUDA device is present")
class NoDevice(unittest.TestCase):
    def check(self, fn):
        with self.assertRaises(maxgemm_torch.MaxgemmError) as cm:
            fn()
        self.assertTrue(str(cm.exception).startswith("maxgemm: no CUDA device"), str(cm.exception))
        self.assertEqual(cm.exception.status, 7)

    def test_model(self):
        new = maxgemm_torch.ModelNew(64, 32, 1)  # constructing needs neither a device nor (kernel 'auto') the library
        x = torch.rand(4, 64)
        self.check(lambda: new(x))
        with torch.no_grad():
            self.check(lambda: new(x))

    def test_function_and_op(self):
        x, w, b = torch.rand(4, 64), torch.rand(32, 64), torch.rand(32)
        self.check(lambda: maxgemm_torch.forward(x, w, b, 0))
        self.check(lambda: torch.ops.maxgemm.forward(x, w, b, 0, "auto", -1, True, 0))


class Arguments(unittest.TestCase):
    def test_construction(self):
        with self.assertRaises(ValueError):
            maxgemm_torch.ModelNew(8, 4, 2)
        with self.assertRaises(ValueError):
            maxgemm_torch.ModelNew(8, 4, 1, precision="fp16")
        with self.assertRaises(ValueError):
            maxgemm_torch.ModelNew(8, 4, 1, options={"tiles": "huge"})
        with self.assertRaises(ValueError):
            maxgemm_torch.ModelNew(8, 4, 1, options={"no_such_option": 1})
        with self.assertRaises(TypeError):
            maxgemm_torch.ModelNew(8, 4, 1, kernel=1.5)
        # kernel 8's x tile (a multiple of 8 up to 256), cluster (0, 1, 2) and W rows (0, 64, 128, 256) are checked
        # without the library
        maxgemm_torch.ModelNew(8, 4, 1, options={"x_tile": 152, "cluster": 2, "fuse": "off", "mcast": "x"})
        maxgemm_torch.ModelNew(8, 4, 1, options={"x_tile": 64, "w_rows": 128})
        for bad in ({"x_tile": 100}, {"x_tile": 264}, {"x_tile": True}, {"cluster": 3}, {"cluster": "2"},
                    {"fuse": 1}, {"fuse": "on"}, {"mcast": "W"}, {"mcast": 2}, {"w_rows": 96}, {"w_rows": "128"},
                    {"w_rows": True}):
            with self.assertRaises(ValueError, msg=str(bad)):
                maxgemm_torch.ModelNew(8, 4, 1, options=bad)

    def test_checks(self):
        x, w, b = torch.rand(4, 8), torch.rand(3, 8), torch.rand(3)
        self.assertEqual(_ops.check_args(x, w, b, -1, "auto"), (1, "fp32"))
        self.assertEqual(_ops.check_args(x, w, b, -2, "tf32"), (0, "tf32"))
        bf = [t.bfloat16() for t in (x, w, b)]
        self.assertEqual(_ops.check_args(*bf, 1, "auto"), (1, "bf16"))
        for args, exc in (((torch.rand(4, 9), w, b, 1, "auto"), ValueError),
                          ((torch.rand(8), w, b, 1, "auto"), ValueError),
                          ((x, w, torch.rand(4), 1, "auto"), ValueError),
                          ((x.double(), w.double(), b.double(), 1, "auto"), TypeError),
                          ((x.bfloat16(), w, b, 1, "auto"), TypeError),
                          ((x, w, b, 2, "auto"), ValueError),
                          ((x, w, b, 1, "bf16"), TypeError),
                          ((*bf, 1, "tf32"), TypeError),
                          ((x, w, b, 1, "fp16"), ValueError),
                          ((x, w.tolist(), b, 1, "auto"), TypeError),
                          ((x, w, b.tolist(), 1, "auto"), TypeError)):
            with self.assertRaises(exc, msg=str(args[3:])):
                _ops.check_args(*args)
        # the message names the tensor that differs
        with self.assertRaisesRegex(TypeError, "bias is torch.float64"):
            _ops.check_args(x, w, b.double(), 1, "auto")
        # a kernel number wider than the library's C int is refused, not truncated into another kernel's
        for bad in (2**32 + 1, 2**31, -2):
            with self.assertRaises(ValueError, msg=str(bad)):
                _ops.forward(x, w, b, kernel=bad)


class Empty(unittest.TestCase):
    """M = 0 or N = 0: the shape torch's Model gives, or an error where torch raises (the library is not called)."""

    def test_empty_outputs_and_errors(self):
        for m, n in ((0, 5), (4, 0), (0, 0)):
            for md in (1, 0):
                x, w = torch.rand(m, 8), torch.rand(n, 8)
                model = Model(8, n, md)
                try:
                    want = model(x)
                except (RuntimeError, IndexError):  # torch 2.11: IndexError "Expected reduction dim 0 to have ..."
                    want = None
                mine = _ops.empty_output(x, w, md) if want is not None else None
                if want is None:
                    with self.assertRaises(L.MaxgemmError, msg=f"M={m} N={n} max_dim {md}"):
                        _ops.empty_output(x, w, md)
                else:
                    self.assertEqual(tuple(mine.shape), tuple(want.shape), f"M={m} N={n} max_dim {md}")
                    self.assertEqual(mine.dtype, want.dtype)


class Backward(unittest.TestCase):
    """reference_grads is the chain torch's autograd builds for the Model: the same values, bit for bit."""

    def compare(self, dtype, max_dim, plant=None, bias=True, M=12, K=16, N=10):
        torch.manual_seed(max_dim + 7)
        model = Model(K, N, max_dim).to(dtype)
        if not bias:
            model.gemm.bias = None
        x = torch.randn(M, K, dtype=dtype)
        if plant:
            plant(x, model)
        x.requires_grad_(True)
        out = model(x)
        g = torch.randn_like(out)
        out.backward(g)
        b = model.gemm.bias
        gx, gw, gb = _ops.reference_grads(x.detach(), model.gemm.weight.detach(),
                                          None if b is None else b.detach(), max_dim, g)
        self.assertTrue(same(gx, x.grad), f"{dtype} max_dim {max_dim}: grad x")
        self.assertTrue(same(gw, model.gemm.weight.grad), f"{dtype} max_dim {max_dim}: grad W")
        if bias:
            self.assertTrue(same(gb, b.grad), f"{dtype} max_dim {max_dim}: grad b")
        else:
            self.assertIsNone(gb)

    def test_dtypes_and_dims(self):
        for dtype in (torch.float64, torch.float32, torch.bfloat16):
            for md in (1, 0, -1, -2):
                self.compare(dtype, md)

    def test_no_bias(self):
        self.compare(torch.float32, 0, bias=False)

    def test_non_finite(self):
        def nan_x(x, model):
            x[3, 5] = math.nan

        def inf_w(x, model):
            with torch.no_grad():
                model.gemm.weight[2, 4] = math.inf

        def inf_b(x, model):
            with torch.no_grad():
                model.gemm.bias[1] = -math.inf
        for plant in (nan_x, inf_w, inf_b):
            for md in (1, 0):
                self.compare(torch.float32, md, plant)

    def test_needs(self):
        x, w, b = torch.randn(5, 6), torch.randn(4, 6), torch.randn(4)
        g = torch.randn(1, 4)
        gx, gw, gb = _ops.reference_grads(x, w, b, 0, g, (False, True, False))
        self.assertIsNone(gx)
        self.assertIsNone(gb)
        self.assertEqual(gw.shape, w.shape)


def cpu_run(cache, x, weight, bias, max_dim, precision, kernel, shortcut):
    """Stands in for _ops.run on the CPU: the same checks, then the Model in torch ops (a new tensor, as the op's
    contract requires)."""
    md, _ = _ops.check_args(x, weight, bias, max_dim, precision)
    cpu_run.calls += 1
    y = torch.nn.functional.linear(x, weight, bias)
    m = torch.max(y, dim=md, keepdim=True).values
    return torch.nn.functional.gelu(m - m.mean(dim=1, keepdim=True)).clone()


class Compile(unittest.TestCase):
    """The op's wiring with its body on the CPU: torch.compile, AOTAutograd, autograd, the direct path."""

    def setUp(self):
        cpu_run.calls = 0
        patcher = mock.patch.object(_ops, "run", cpu_run)
        patcher.start()
        self.addCleanup(patcher.stop)
        torch._dynamo.reset()

    def models(self, max_dim, K=32, N=24):
        torch.manual_seed(1)
        ref = Model(K, N, max_dim)
        new = maxgemm_torch.ModelNew(K, N, max_dim)
        new.load_state_dict(ref.state_dict())
        return ref, new

    def test_direct_path_only_without_autograd(self):
        ref, new = self.models(0)
        x = torch.rand(6, 32)
        seen = []
        real = _ops.direct_ok

        def recording(x, w, b):
            seen.append(real(x, w, b))
            return seen[-1]
        with mock.patch.object(_ops, "direct_ok", recording):
            with torch.no_grad():
                out = new(x)
            self.assertEqual(seen, [True])
            self.assertIsNone(out.grad_fn)
            out = new(x)  # the parameters require grad: through the op, with autograd history
            self.assertEqual(seen, [True, False])
            self.assertIsNotNone(out.grad_fn)
        self.assertTrue(same(out.detach(), ref(x).detach()))

    def assert_same_backward(self, ref, new, run_new, x):
        """ref(x) and run_new(x) (new itself, or a compiled new) give the same output and, for one random output
        gradient, the same gradients of x and of ref's / new's parameters, bit for bit."""
        x1, x2 = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        out_ref, out_new = ref(x1), run_new(x2)
        self.assertTrue(same(out_ref.detach(), out_new.detach()))
        g = torch.randn_like(out_ref)
        out_ref.backward(g)
        out_new.backward(g)
        self.assertTrue(same(x1.grad, x2.grad))
        self.assertTrue(same(ref.gemm.weight.grad, new.gemm.weight.grad))
        self.assertTrue(same(ref.gemm.bias.grad, new.gemm.bias.grad))

    def test_autograd_matches_model(self):
        for md in (1, 0):
            ref, new = self.models(md)
            self.assert_same_backward(ref, new, new, torch.randn(6, 32))

    def test_compile_fullgraph_inference(self):
        from torch._inductor.compile_fx import compile_fx
        ref, new = self.models(0)

        class Holder(nn.Module):  # a model containing ModelNew, with torch ops around it
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return self.inner(x * 0.5 + 0.25) * 2.0 + 1.0
        holder = Holder(new)
        # inductor on ModelNew alone (its graph is the op: no kernel to compile), aot_eager on the holder (inductor
        # would compile C++ for the torch ops around it, tens of seconds on a CI core).
        for module, inner in ((new, compile_fx), (holder, "aot_eager")):
            graphs = []

            def backend(gm, example_inputs):
                graphs.append(gm)
                return inner(gm, example_inputs) if callable(inner) else \
                    torch._dynamo.lookup_backend(inner)(gm, example_inputs)
            torch._dynamo.reset()
            compiled = torch.compile(module, fullgraph=True, backend=backend)
            with torch.no_grad():
                for m in (6, 9, 13):  # the second size recompiles with a dynamic batch, the third reuses it
                    x = torch.rand(m, 32)
                    self.assertTrue(same(compiled(x), module(x)), f"{type(module).__name__} batch {m}")
            ops = [n.target for gm in graphs for n in gm.graph.nodes if n.op == "call_function"]
            self.assertIn(torch.ops.maxgemm.forward.default, ops)
            self.assertEqual(len(graphs), 2)

    def test_compile_function(self):
        x, w, b = torch.rand(5, 32), torch.rand(24, 32), torch.rand(24)
        kernels = ["auto", 6] + (["naive"] if HAVE_LIB else [])
        for kernel in kernels:
            torch._dynamo.reset()
            graphs = []

            def backend(gm, example_inputs):
                graphs.append(gm)
                return gm.forward
            fn = torch.compile(lambda x, w, b: maxgemm_torch.forward(x, w, b, 0, kernel=kernel), fullgraph=True,
                               backend=backend)
            with torch.no_grad():
                self.assertTrue(same(fn(x, w, b), maxgemm_torch.forward(x, w, b, 0, kernel=kernel)), kernel)
            calls = [n.args for gm in graphs for n in gm.graph.nodes
                     if n.op == "call_function" and n.target == torch.ops.maxgemm.forward.default]
            self.assertEqual(len(calls), 1)
            self.assertEqual(calls[0][5], maxgemm_torch.parse_kernel(kernel) if kernel != 6 else 6)
            self.assertEqual(calls[0][7], 0)  # the shared cache, looked up at run time

    def test_compile_fullgraph_training(self):
        for md in (1, 0):
            ref, new = self.models(md)
            compiled = torch.compile(new, fullgraph=True, backend="aot_eager")
            self.assert_same_backward(ref, new, compiled, torch.randn(7, 32))

    def test_fake_shapes(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode():
            x = torch.empty(5, 16, device="cuda")
            w, b = torch.empty(8, 16, device="cuda"), torch.empty(8, device="cuda")
            for md, shape in ((1, (5, 1)), (-1, (5, 1)), (0, (1, 8)), (-2, (1, 8))):
                out = torch.ops.maxgemm.forward(x, w, b, md, "auto", -1, True, 0)
                self.assertEqual((tuple(out.shape), out.device.type), (shape, "cuda"))
            with self.assertRaises(ValueError):
                torch.ops.maxgemm.forward(x, w[:, :8], b, 1, "auto", -1, True, 0)
        self.assertEqual(cpu_run.calls, 0)


class FakeLib:
    """Records the libmaxgemm calls PlanCache makes; plans are integers."""

    def __init__(self):
        self.calls = []
        self.next = 100
        self.live = set()
        self.options = {}

    def mg_plan_desc_default(self):
        return L.PlanDesc(1024, 8192, 8192, 1, 0, -1, 1)

    def mg_options_default(self):
        return L.Options(0, 0, 0, 0, 1, 3, 0, 0)

    def mg_plan_create(self, handle_ref, desc_ref):
        d = desc_ref._obj
        self.next += 1
        handle_ref._obj.value = self.next
        self.live.add(self.next)
        self.calls.append(("create", self.next, d.m, d.n, d.k, d.max_dim, d.precision, d.kernel, d.shortcut))
        return 0

    def mg_set_weights(self, h, w, b, stream):
        self.calls.append(("set_weights", h, w, b))
        return 0

    def mg_forward_rows(self, h, m, x, out, stream):
        assert h in self.live
        self.calls.append(("forward_rows", h, m))
        return 0

    def mg_plan_destroy(self, h):
        self.live.discard(h)
        self.calls.append(("destroy", h))

    def mg_plan_set_shortcut(self, h, on):
        self.calls.append(("set_shortcut", h, on))
        return 0

    def mg_plan_set_options(self, h, opt_ref):
        o = opt_ref._obj
        self.options[h] = L.options_dict(o)
        self.calls.append(("set_options", h))
        return 0

    def mg_plan_get_options(self, h, opt_ref):
        for name, value in L.make_options(self.options.get(h, {})).items():
            setattr(opt_ref._obj, name, value)
        return 0

    def mg_plan_kernel(self, h):
        return 6

    def mg_plan_kernel_name(self, h):
        return b"wgmma_bf16x3"

    def mg_strerror(self, s):
        return b"error"

    def mg_last_error(self):
        return b""

    def of(self, kind):
        return [c for c in self.calls if c[0] == kind]


def live(cache):
    return sum(not r["retired"] for r in cache.info())


class Plans(unittest.TestCase):
    def setUp(self):
        self.lib = FakeLib()
        self.capturing = False
        for target, name, fn in ((L, "load_library", lambda: self.lib),
                                 (_plans, "is_capturing", lambda: self.capturing),
                                 (_plans, "raw_stream", lambda device: 7)):
            patcher = mock.patch.object(target, name, fn)
            patcher.start()
            self.addCleanup(patcher.stop)
        torch.manual_seed(0)
        self.w = torch.randn(16, 32)
        self.b = torch.randn(16)
        self.cache = _plans.PlanCache()
        self.addCleanup(self.cache.release)

    def fwd(self, m, max_dim=1, w=None, b=None, shortcut=True, cache=None):
        cache = self.cache if cache is None else cache
        w = self.w if w is None else w
        b = self.b if b is None else b
        return cache.forward(torch.randn(m, 32), w, b, m, 0, max_dim, "fp32", -1, shortcut)

    def test_one_plan_sized_for_the_largest_batch(self):
        self.assertEqual(self.fwd(64).shape, (64, 1))
        self.assertEqual(self.fwd(8).shape, (8, 1))
        self.assertEqual(self.fwd(1).shape, (1, 1))
        self.assertEqual(len(self.lib.of("create")), 1)
        self.assertEqual([c[2] for c in self.lib.of("forward_rows")], [64, 8, 1])
        self.fwd(100)  # larger: one new plan of capacity 100 replaces the old one
        creates = self.lib.of("create")
        self.assertEqual([c[2] for c in creates], [64, 100])
        self.assertEqual(self.lib.of("destroy"), [("destroy", creates[0][1])])
        self.fwd(64)
        self.assertEqual(len(self.lib.of("create")), 2)
        self.assertEqual(self.fwd(3, max_dim=0).shape, (1, 16))  # another key: another plan
        self.assertEqual(live(self.cache), 2)
        info = self.cache.info()
        self.assertEqual([(r["capacity"], r["max_dim"], r["weight_sets"]) for r in info], [(100, 1, 1), (3, 0, 1)])

    def test_weights_reset_only_on_change(self):
        for _ in range(3):
            self.fwd(4)
        self.assertEqual(len(self.lib.of("set_weights")), 1)
        with torch.no_grad():
            self.w.mul_(2.0)  # in place: the version counter moves
        self.fwd(4)
        self.assertEqual(len(self.lib.of("set_weights")), 2)
        self.b.data.add_(1.0)  # through .data: invisible to the version counter...
        self.fwd(4)
        self.assertEqual(len(self.lib.of("set_weights")), 2)
        self.cache.refresh_weights()  # ... until refresh_weights()
        self.fwd(4)
        self.assertEqual(len(self.lib.of("set_weights")), 3)
        w2 = self.w.clone()  # another tensor: another data_ptr
        self.fwd(4, w=w2)
        self.assertEqual(len(self.lib.of("set_weights")), 4)
        self.assertEqual(self.lib.of("set_weights")[-1][2], w2.data_ptr())
        self.fwd(4, b=None)  # no bias: a zero bias is given to the library and held
        self.assertEqual(len(self.lib.of("set_weights")), 5)

    def test_shortcut_and_options(self):
        self.fwd(4, shortcut=True)
        self.fwd(4, shortcut=False)
        self.assertEqual(self.lib.of("set_shortcut"), [("set_shortcut", 101, 0)])
        cache = _plans.PlanCache({"tiles": "main", "pdl": False})
        self.fwd(4, cache=cache)
        h = self.lib.of("create")[-1][1]
        self.assertEqual((self.lib.options[h]["tiles"], self.lib.options[h]["pdl"]), ("main", False))
        cache.set_options({"streamk": "off"})
        self.assertEqual((self.lib.options[h]["tiles"], self.lib.options[h]["streamk"]), ("auto", "off"))
        clone = copy.deepcopy(cache)
        self.assertNotEqual(clone.id, cache.id)
        self.assertEqual(live(clone), 0)
        self.assertEqual(clone.options, cache.options)
        cache.release()
        self.assertNotIn(h, self.lib.live)

    def test_lru(self):
        self.cache.max_plans = 2
        for md in (1, 0):
            self.fwd(4, max_dim=md)
        self.fwd(4, max_dim=1)       # touch max_dim 1: max_dim 0 is now the oldest
        w2 = torch.randn(16, 32)
        self.cache.forward(torch.randn(4, 32), w2, self.b, 4, 0, 1, "tf32", -1, True)  # a third key
        self.assertEqual(live(self.cache), 2)
        destroyed = [c[1] for c in self.lib.of("destroy")]
        md0_plan = [c[1] for c in self.lib.of("create") if c[5] == 0][0]
        self.assertEqual(destroyed, [md0_plan])

    def test_capture(self):
        self.capturing = True
        with self.assertRaisesRegex(L.MaxgemmError, "no plan.*warm-up"):
            self.fwd(8)
        self.assertEqual(self.lib.calls, [])  # nothing allocated under capture
        self.capturing = False
        self.fwd(8)
        plan_a = self.lib.of("create")[0][1]
        self.capturing = True
        self.fwd(4)  # a smaller batch on the warmed-up plan: captured, pinned
        with self.assertRaisesRegex(L.MaxgemmError, "only a plan for up to 8 rows"):
            self.fwd(16)
        with torch.no_grad():
            self.w.add_(1.0)
        with self.assertRaisesRegex(L.MaxgemmError, "weights changed"):
            self.fwd(4)
        self.capturing = False
        self.fwd(4)  # new weights for a captured plan: a new plan, the captured one retired, not re-prepared
        plan_b = self.lib.of("create")[-1][1]
        self.assertNotEqual(plan_a, plan_b)
        self.assertIn(plan_a, self.lib.live)
        self.assertEqual([c[1] for c in self.lib.of("set_weights")], [plan_a, plan_b])
        self.assertEqual([(r["captured"], r["retired"]) for r in self.cache.info()], [(False, False), (True, True)])
        self.cache.release()
        self.assertEqual(self.lib.live, set())

    def test_close_deferred_during_capture(self):
        self.fwd(4)
        self.capturing = True
        self.cache.release()
        self.assertEqual(self.lib.of("destroy"), [])
        self.capturing = False
        self.fwd(4)  # the next slow path outside capture destroys it
        self.assertEqual(len(self.lib.of("destroy")), 1)

    def test_threads_share_a_cache_one_call_at_a_time(self):
        """Two threads on one cache with their own weights (a set_weights before most forwards): the library is
        entered by one of them at a time, and each forward runs on the weights its own thread set (ctypes releases
        the GIL in a real library call; the stand-in sleeps there to let the other thread in)."""
        import threading
        import time
        lib, state = self.lib, {"active": 0, "most": 0, "weights": {}, "wrong": 0}

        def enter():
            state["active"] += 1
            state["most"] = max(state["most"], state["active"])
            time.sleep(0.0005)

        def set_weights(h, w, b, stream):
            enter()
            state["weights"][h] = w
            state["active"] -= 1
            return 0

        def forward_rows(h, m, x, out, stream):
            enter()
            state["wrong"] += state["weights"].get(h) != state["expect"].get(threading.get_ident())
            state["active"] -= 1
            return 0
        state["expect"] = {}
        lib.mg_set_weights, lib.mg_forward_rows = set_weights, forward_rows
        errors = []

        def worker(w):
            state["expect"][threading.get_ident()] = w.data_ptr()
            try:
                for i in range(25):
                    self.fwd(1 + i % 5, w=w)
            except Exception as e:  # reported below: an exception in a thread would not fail the test
                errors.append(e)
        ws = [torch.randn(16, 32), torch.randn(16, 32)]
        threads = [threading.Thread(target=worker, args=(w,)) for w in ws]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(state["most"], 1, "two threads were inside the library at once")
        self.assertEqual(state["wrong"], 0, "a forward ran on the other thread's weights")


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    sys.exit(1 if failed else 0)
