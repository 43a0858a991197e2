"""maxgemm_torch: the maxgemm library from PyTorch, through ctypes over build/libmaxgemm.so.

ModelNew is a drop-in replacement for the reference Model (SEMANTICS.md):

    out = gelu(max(x @ W^T + b, dim=max_dim, keepdim=True) - mean(dim=1, keepdim=True))

It holds the same parameters under the same names (gemm.weight, gemm.bias), so
`ModelNew(...).load_state_dict(Model(...).state_dict())` works, and runs the forward pass with libmaxgemm's fused
kernels on the current CUDA stream. Inference only: the output has no autograd history.

Library: $MAXGEMM_LIB, else ../build/libmaxgemm.so next to this file (build it with `make build/libmaxgemm.so`).
Only the standard library and torch are used.

Plans: libmaxgemm sizes its buffers per problem (M, N, K, max_dim, precision), so ModelNew keeps one plan per
(M, dtype, device, precision, kernel) in a small LRU cache (max_cached_plans); an evicted plan is destroyed at once,
the rest when the module is collected or moved (.to/.cuda/.bfloat16 drop every plan). Each plan's weight-side
preparation (mg_set_weights: splits, padding, the short-circuit's statistics) is re-run whenever the parameters
change: a different tensor (data_ptr) or an in-place update (torch's _version counter, which optimizer steps and
load_state_dict bump). Writes through `param.data` bypass the version counter: call refresh_weights() after them.
"""

import collections
import ctypes
import os

import torch
from torch import nn

__all__ = ["ModelNew", "MaxgemmError", "load_library", "library_path", "parse_kernel", "PRECISIONS"]

# enum mg_precision in src/maxgemm.h (its values are part of the public ABI).
PRECISIONS = {"fp32": 0, "tf32": 1, "bf16": 2}
KERNEL_AUTO = -1  # MG_KERNEL_AUTO


class PlanDesc(ctypes.Structure):
    """struct mg_plan_desc, field for field: {int64 m, n, k; int max_dim; mg_precision precision; int kernel;
    int shortcut} (a C enum is an int on every ABI the project targets). 40 bytes, no padding."""
    _fields_ = [
        ("m", ctypes.c_int64),
        ("n", ctypes.c_int64),
        ("k", ctypes.c_int64),
        ("max_dim", ctypes.c_int),
        ("precision", ctypes.c_int),
        ("kernel", ctypes.c_int),
        ("shortcut", ctypes.c_int),
    ]


class MaxgemmError(RuntimeError):
    """A libmaxgemm call failed; .status is the mg_status number."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def library_path():
    env = os.environ.get("MAXGEMM_LIB")
    if env:
        return env
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "libmaxgemm.so"))


_lib = None


def load_library():
    """Loads libmaxgemm.so once and declares every prototype used here (a wrong prototype would pass garbage
    silently, so each one mirrors src/maxgemm.h or src/mg_kernel.h exactly)."""
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise OSError(f"cannot load libmaxgemm from {path}: {e}. Build it with `make build/libmaxgemm.so` "
                      f"in the repository root, or point MAXGEMM_LIB at it.") from e
    c_int, c_void_p, c_char_p = ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
    protos = {
        "mg_plan_desc_default": ([], PlanDesc),
        "mg_plan_create": ([ctypes.POINTER(c_void_p), ctypes.POINTER(PlanDesc)], c_int),
        "mg_set_weights": ([c_void_p, c_void_p, c_void_p, c_void_p], c_int),
        "mg_forward": ([c_void_p, c_void_p, c_void_p, c_void_p], c_int),
        "mg_plan_destroy": ([c_void_p], None),
        "mg_plan_kernel": ([c_void_p], c_int),
        "mg_plan_kernel_name": ([c_void_p], c_char_p),
        "mg_plan_set_shortcut": ([c_void_p, c_int], c_int),
        "mg_strerror": ([c_int], c_char_p),
        "mg_last_error": ([], c_char_p),
        # Internal (src/mg_kernel.h) but exported: the registry's own name/number parser, so Python never keeps
        # a copy of the kernel table that could drift from src/registry.c.
        "mg_registry_parse": ([c_char_p, ctypes.POINTER(c_int)], c_int),
    }
    for name, (argtypes, restype) in protos.items():
        try:
            fn = getattr(lib, name)
        except AttributeError as e:
            raise OSError(f"{path} does not export {name}: rebuild it (make build/libmaxgemm.so)") from e
        fn.argtypes = argtypes
        fn.restype = restype
    # Layout self-check: the defaults documented in maxgemm.h land in the right fields only if PlanDesc mirrors the
    # C struct (a shifted field would show up as kernel != -1 or a precision out of range).
    d = lib.mg_plan_desc_default()
    if ctypes.sizeof(PlanDesc) != 40 or d.kernel != KERNEL_AUTO or d.precision not in PRECISIONS.values() \
            or d.shortcut not in (0, 1) or min(d.m, d.n, d.k) <= 0:
        raise OSError(f"{path}: mg_plan_desc layout does not match maxgemm_torch.PlanDesc "
                      f"(default desc read as m={d.m} n={d.n} k={d.k} max_dim={d.max_dim} "
                      f"precision={d.precision} kernel={d.kernel} shortcut={d.shortcut})")
    _lib = lib
    return lib


def _error_text(lib, status):
    text = lib.mg_strerror(status).decode(errors="replace")
    detail = lib.mg_last_error().decode(errors="replace")
    return f"{text}: {detail}" if detail else text


def _check(lib, status, what):
    if status != 0:
        raise MaxgemmError(f"maxgemm {what} failed: {_error_text(lib, status)}", status)


def parse_kernel(kernel):
    """'auto', a registry name ('cublas', 'wgmma_ws', ...) or a registry number -> the number (-1 for auto),
    parsed by the library's registry (src/registry.c); ValueError for anything it does not know."""
    if isinstance(kernel, bool) or not isinstance(kernel, (int, str)):
        raise TypeError(f"kernel must be 'auto', a kernel name or a registry number, not {kernel!r}")
    lib = load_library()
    out = ctypes.c_int(0)
    status = lib.mg_registry_parse(str(kernel).encode(), ctypes.byref(out))
    if status != 0:
        raise ValueError(f"kernel {kernel!r}: {lib.mg_last_error().decode(errors='replace')}")
    return out.value


_get_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
# torch.cuda.current_device() runs torch's lazy-init check first; once a CUDA tensor exists (x is one) that check
# is settled, and the C accessor underneath returns the same index for less host time.
_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device


def _raw_stream(index):
    """The current CUDA stream's handle on device `index`: torch's raw accessor (what its own compiled kernels use)
    costs well under a microsecond; the public torch.cuda.current_stream() builds a Python Stream object per call."""
    if _get_raw_stream is not None:
        return _get_raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


def _version_of(t):
    """torch's in-place modification counter; inference-mode tensors have none (their in-place updates are not
    seen: call ModelNew.refresh_weights() after them)."""
    try:
        return t._version
    except RuntimeError:
        return None


def _closed_plan_forward(*_):
    raise MaxgemmError("maxgemm plan used after it was destroyed", -1)


class _Plan:
    """One mg_plan and the weight tensors it was given (kept alive: the library reads them at every forward, and
    holding them also means a new weight tensor can never reuse their address unnoticed)."""

    def __init__(self, lib, desc):
        self._lib = lib  # held so that destruction at interpreter exit still finds the library
        self.handle = ctypes.c_void_p()
        _check(lib, lib.mg_plan_create(ctypes.byref(self.handle), ctypes.byref(desc)), "mg_plan_create")
        self.shortcut = bool(desc.shortcut)
        self.weights_key = None
        self.keep = ()
        handle = self.handle.value
        fwd = lib.mg_forward
        self.forward = lambda x_ptr, out_ptr, stream: fwd(handle, x_ptr, out_ptr, stream)

    def set_weights(self, key, w, b, stream, hold=()):
        """w, b: the dense tensors the library reads; hold: the parameters they came from (kept so that the
        addresses in key stay unique while this plan remembers them)."""
        self.weights_key = None  # a failure below leaves the plan without weights (the library agrees)
        _check(self._lib, self._lib.mg_set_weights(self.handle, w.data_ptr(), b.data_ptr(), stream),
               "mg_set_weights")
        self.keep = (w, b) + tuple(hold)
        self.weights_key = key

    def set_shortcut(self, on):
        _check(self._lib, self._lib.mg_plan_set_shortcut(self.handle, int(bool(on))), "mg_plan_set_shortcut")
        self.shortcut = bool(on)

    def kernel(self):
        return self._lib.mg_plan_kernel(self.handle), self._lib.mg_plan_kernel_name(self.handle).decode()

    def close(self):
        # mg_plan_destroy frees with cudaFree, which waits for work in flight on the device, so buffers a queued
        # forward still uses are not released under it.
        if self.handle:
            self._lib.mg_plan_destroy(self.handle)
            self.handle = ctypes.c_void_p()
        self.forward = _closed_plan_forward
        self.keep = ()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing sensible left to do
            pass


class ModelNew(nn.Module):
    """Model(in_features, out_features, max_dim) computed by libmaxgemm.

    kernel:    'auto' (the library's choice: the fastest registered kernel that meets the precision's bar), or a
               registry name or number (see `build/maxgemm list`).
    precision: None picks from the input dtype: float32 -> 'fp32' (bar 1e-4), bfloat16 -> 'bf16' (bar 1e-2);
               'tf32' asks for the lossy tensor-core mode (bar 2e-3) on float32 inputs.
    shortcut:  max_dim 1 only: use the library's exact certificate (an all-finite, non-overflowing row is +0.0
               without a GEMM). It may be changed at any time by assigning .shortcut.
    """

    max_cached_plans = 4

    def __init__(self, in_features, out_features, max_dim, *, kernel="auto", precision=None, shortcut=True):
        super().__init__()
        if isinstance(max_dim, bool) or not isinstance(max_dim, int) or max_dim not in (-2, -1, 0, 1):
            raise ValueError(f"max_dim must be -2, -1, 0 or 1 (the dims of a 2-D tensor), got {max_dim!r}")
        if precision is not None and precision not in PRECISIONS:
            raise ValueError(f"precision must be None, 'fp32', 'tf32' or 'bf16', got {precision!r}")
        kernel_id = parse_kernel(kernel)  # validates the name now (and before allocating W), not at the first forward
        self.gemm = nn.Linear(in_features, out_features)
        self.in_features = in_features
        self.out_features = out_features
        self.max_dim = max_dim
        self.precision = precision
        self.shortcut = bool(shortcut)
        self.kernel = kernel
        self._kernel_id = kernel_id
        self._plans = collections.OrderedDict()

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, max_dim={self.max_dim}, "
                f"kernel={self.kernel!r}, precision={self.precision!r}, shortcut={self.shortcut}")

    # ---- plan bookkeeping ------------------------------------------------------------------------------------
    def release_plans(self):
        """Destroys every cached plan (they are re-created on demand)."""
        plans = self.__dict__.get("_plans")
        while plans:
            plans.popitem(last=False)[1].close()

    def refresh_weights(self):
        """Forces mg_set_weights at the next forward (needed only after writes through param.data)."""
        for plan in self.__dict__.get("_plans", {}).values():
            plan.weights_key = None

    def plan_info(self):
        """What each cached plan runs: a list of dicts (m, dtype, device, precision, kernel id and name, shortcut)."""
        info = []
        for (m, dtype, device, prec, _), plan in self._plans.items():
            kid, kname = plan.kernel()
            info.append({"m": m, "dtype": str(dtype).replace("torch.", ""), "device": f"cuda:{device}",
                         "precision": prec, "kernel": kid, "kernel_name": kname, "shortcut": plan.shortcut})
        return info

    def _apply(self, fn, *args, **kwargs):
        # .to()/.cuda()/.bfloat16() replace the parameters: plans made for the old ones must not keep them alive.
        self.release_plans()
        return super()._apply(fn, *args, **kwargs)

    def __getstate__(self):
        # copy.deepcopy and pickle: plans are device handles, never copied (a copy would be destroyed twice).
        state = self.__dict__.copy()
        state["_plans"] = collections.OrderedDict()
        return state

    def __del__(self):
        try:
            self.release_plans()
        except Exception:
            pass

    def _precision_for(self, dtype):
        if dtype == torch.float32:
            prec = self.precision or "fp32"
            if prec not in ("fp32", "tf32"):
                raise TypeError(f"precision {prec!r} needs bfloat16 input and weights; x is float32")
        else:  # bfloat16 (checked by the caller)
            prec = self.precision or "bf16"
            if prec != "bf16":
                raise TypeError(f"precision {prec!r} needs float32 input and weights; x is bfloat16")
        return prec

    def _plan(self, m, dtype, device, prec):
        key = (m, dtype, device, prec, self._kernel_id)
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        while len(self._plans) >= max(1, self.max_cached_plans):
            self._plans.popitem(last=False)[1].close()
        lib = load_library()
        desc = lib.mg_plan_desc_default()
        desc.m, desc.n, desc.k = m, self.out_features, self.in_features
        desc.max_dim = self.max_dim
        desc.precision = PRECISIONS[prec]
        desc.kernel = self._kernel_id
        desc.shortcut = int(self.shortcut)
        plan = _Plan(lib, desc)
        self._plans[key] = plan
        return plan

    # ---- forward ---------------------------------------------------------------------------------------------
    def forward(self, x):
        # The hot path is written for host time (an isolated short-circuit call is ~20 us in all, most of it here):
        # parameters through the module dicts instead of nn.Module.__getattr__, the device index through torch's C
        # accessor, no context manager unless x is on another device. Every check is still made on every call.
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        if not x.is_cuda:
            raise TypeError(f"ModelNew runs on CUDA only; x is on {x.device} (move x and the module with .cuda())")
        shape = x.shape
        if len(shape) != 2 or shape[1] != self.in_features:
            raise ValueError(f"x must be 2-D of shape (batch, {self.in_features}), got {tuple(shape)}")
        dtype = x.dtype
        if dtype is not torch.float32 and dtype is not torch.bfloat16:
            raise TypeError(f"x must be float32 or bfloat16, got {dtype}")
        params = self._modules["gemm"]._parameters
        w, b = params["weight"], params["bias"]
        if w.shape != (self.out_features, self.in_features):
            raise ValueError(f"gemm.weight has shape {tuple(w.shape)}, expected "
                             f"({self.out_features}, {self.in_features})")
        if w.dtype is not dtype or (b is not None and b.dtype is not dtype):
            raise TypeError(f"x is {dtype} but the parameters are {w.dtype}: convert the module with "
                            f".to({dtype}) (the library takes x, W and b in one element type)")
        dev = x.get_device()  # an int: cheaper per call than building and comparing torch.device objects
        if w.get_device() != dev or (b is not None and b.get_device() != dev):
            raise ValueError(f"x is on {x.device} but the parameters are on {w.device}")
        prec = self._precision_for(dtype)
        # The library reads x as dense row-major M x K: a strided view is copied once here (an extra read and write
        # of x; pass a contiguous tensor to avoid it).
        if not x.is_contiguous():
            x = x.contiguous()
        m = shape[0]
        if m == 0 and self.max_dim in (1, -1):
            # torch gives an empty (0, 1) result here; the library rejects M = 0 (it is an error only for max_dim 0).
            return x.new_empty((0, 1))
        # The library allocates and launches on the current device; entering torch.cuda.device costs several
        # microseconds per call, so it is entered only when x lives on another device.
        if dev == _current_device():
            return self._launch(x, w, b, m, dtype, dev, prec)
        with torch.cuda.device(dev):
            return self._launch(x, w, b, m, dtype, dev, prec)

    def _launch(self, x, w, b, m, dtype, dev, prec):
        stream = _raw_stream(dev)
        plan = self._plan(m, dtype, dev, prec)
        if plan.shortcut != self.shortcut:
            plan.set_shortcut(self.shortcut)
        key = (w.data_ptr(), _version_of(w), None if b is None else (b.data_ptr(), _version_of(b)))
        if plan.weights_key != key:
            wt = w.detach()
            wt = wt if wt.is_contiguous() else wt.contiguous()  # the library reads W as dense N x K
            bt = b.detach().contiguous() if b is not None else torch.zeros(self.out_features, dtype=w.dtype,
                                                                            device=w.device)
            plan.set_weights(key, wt, bt, stream, hold=(w.detach(), None if b is None else b.detach()))
        out = x.new_empty((m, 1) if self.max_dim in (1, -1) else (1, self.out_features))
        status = plan.forward(x.data_ptr(), out.data_ptr(), stream)
        if status != 0:
            _check(plan._lib, status, "mg_forward")
        return out
