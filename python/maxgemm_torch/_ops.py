"""The custom operator maxgemm::forward, its fake (shape-only) implementation and its autograd rule.

    maxgemm::forward(Tensor x, Tensor weight, Tensor? bias, SymInt max_dim, str precision, SymInt kernel,
                     bool shortcut, SymInt cache) -> Tensor

computes gelu(max(x @ weight.T + bias, dim=max_dim, keepdim=True) - mean(dim=1, keepdim=True)) with libmaxgemm:
x (M, K), weight (N, K), bias (N) or None, all float32 or all bfloat16, on one CUDA device; out (M, 1) for max_dim
1 / -1, (1, N) for 0 / -2, x's dtype. precision: 'auto' (fp32 for float32, bf16 for bfloat16), 'fp32', 'tf32' or
'bf16'; kernel: a registry number, -1 for auto; shortcut: max_dim 1's exact certificate; cache: the id of the
PlanCache that holds the plans (0 or an unknown id: the shared cache). kernel, shortcut and cache choose how the
result is computed, not what it is.

torch.compile traces the op as one node (the fake implementation gives the output's shape), so a model holding
ModelNew compiles with fullgraph=True; CUDA graph capture records the library's launches (the C library runs its
full path on a capturing stream).

Backward: the exact gradient of the reference Model at (x, weight, bias), computed with torch ops: y = linear(x,
weight, bias) is recomputed (the library never forms it), torch.max gives the arg-max, and the chain is the one
torch's autograd builds for the Model (gelu_backward, the mean's broadcast, a one-hot scatter of the max's gradient,
then linear's two matrix products and the bias sum). It costs one GEMM more than the Model's own backward; where
the library's max and torch's differ by rounding in a near tie, the gradient is torch's.

Eager calls from ModelNew and maxgemm_torch.forward skip the dispatcher (it costs ~25 us of host time per call, more
than the rest of the call) when nothing needs it: no tracing, no dispatch mode, no input requiring grad. Both
paths run the same function, run().
"""

from typing import Optional

import torch

from . import _library as L
from . import _plans

__all__ = ["forward", "run", "reference_grads", "OP_NAME"]

OP_NAME = "maxgemm::forward"
_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
_dispatch_depth = torch._C._len_torch_dispatch_stack


def check_args(x, weight, bias, max_dim, precision):
    """The checks every call makes, the fake implementation included (no device checks: fake tensors may be traced
    on any device). Returns (normalised max_dim 0 or 1, precision name)."""
    for name, t in (("x", x), ("weight", weight), ("bias", bias)):
        if not isinstance(t, torch.Tensor) and not (name == "bias" and t is None):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    shape, wshape = x.shape, weight.shape
    if len(wshape) != 2:
        raise ValueError(f"weight must be 2-D (out_features, in_features), got {tuple(wshape)}")
    if len(shape) != 2 or shape[1] != wshape[1]:
        raise ValueError(f"x must be 2-D of shape (batch, {wshape[1]}), got {tuple(shape)}")
    if bias is not None and tuple(bias.shape) != (wshape[0],):
        raise ValueError(f"bias must have shape ({wshape[0]},), got {tuple(bias.shape)}")
    if precision != "auto" and precision not in L.PRECISIONS:
        raise ValueError(f"precision must be 'auto', 'fp32', 'tf32' or 'bf16', got {precision!r}")
    dtype = x.dtype
    if dtype != torch.float32 and dtype != torch.bfloat16:
        raise TypeError(f"x must be float32 or bfloat16, got {dtype}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.dtype != dtype:
            raise TypeError(f"x is {dtype} but the {name} is {t.dtype}: convert the module with .to({dtype}) "
                            f"(the library takes x, W and b in one element type)")
    if max_dim == 1 or max_dim == -1:
        md = 1
    elif max_dim == 0 or max_dim == -2:
        md = 0
    else:
        raise ValueError(f"max_dim must be -2, -1, 0 or 1 (the dims of a 2-D tensor), got {max_dim!r}")
    if dtype == torch.float32:
        prec = "fp32" if precision == "auto" else precision
        if prec != "fp32" and prec != "tf32":
            raise TypeError(f"precision {precision!r} needs bfloat16 input and weights; x is float32")
    else:
        prec = "bf16" if precision == "auto" else precision
        if prec != "bf16":
            raise TypeError(f"precision {precision!r} needs float32 input and weights; x is bfloat16")
    return md, prec


def empty_output(x, weight, md):
    """torch's answer where the batch M or the features N are 0 (the library takes M, N >= 1): an empty output
    ((0, 1) for max_dim 1 over no rows, (1, 0) for max_dim 0 over no features), or the error torch raises for a max
    over an empty dim."""
    m, n = x.shape[0], weight.shape[0]
    if md == 1 and n == 0:
        raise L.MaxgemmError("maxgemm: max_dim 1 over N = 0 output features: max on a tensor with no elements "
                             "(torch raises too)", L.STATUS_SHAPE)
    if md == 0 and m == 0:
        raise L.MaxgemmError("maxgemm: max_dim 0 over an empty batch (M = 0): max on a tensor with no elements "
                             "(torch raises too)", L.STATUS_SHAPE)
    return x.new_empty((0, 1) if md == 1 else (1, 0))


def run(cache, x, weight, bias, max_dim, precision, kernel, shortcut):
    """The implementation: checks, then the library on the current stream of x's device."""
    if not isinstance(x, torch.Tensor) or not x.is_cuda:
        if not torch.cuda.is_available():
            raise L.no_device_error()
        where = x.device if isinstance(x, torch.Tensor) else type(x).__name__
        raise TypeError(f"maxgemm runs on CUDA only; x is on {where} (move x and the module with .cuda())")
    md, prec = check_args(x, weight, bias, max_dim, precision)
    dev = x.get_device()  # an int: cheaper per call than building and comparing torch.device objects
    if weight.get_device() != dev or (bias is not None and bias.get_device() != dev):
        name, t = ("weight", weight) if weight.get_device() != dev else ("bias", bias)
        raise ValueError(f"x is on {x.device} but the {name} is on {t.device}")
    m = x.shape[0]
    if m == 0 or weight.shape[0] == 0:
        return empty_output(x, weight, md)
    # The library reads x as dense row-major M x K: a strided view is copied once here (an extra read and write of x;
    # pass a contiguous tensor to avoid it). So is a view whose base is not 16-byte aligned (a storage offset that is
    # not a multiple of 16 bytes), which kernel 4's TMA loads refuse (src/maxgemm.h, mg_forward).
    if not x.is_contiguous():
        x = x.contiguous()
    elif x.data_ptr() % 16 != 0:
        x = x.clone()
    # The library allocates and launches on the current device; entering torch.cuda.device costs several
    # microseconds per call, so it is entered only when x lives on another device.
    if dev == _current_device():
        return cache.forward(x, weight, bias, m, dev, md, prec, kernel, shortcut)
    with torch.cuda.device(dev):
        return cache.forward(x, weight, bias, m, dev, md, prec, kernel, shortcut)


@torch.library.custom_op(OP_NAME, mutates_args=())
def _forward_op(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], max_dim: int, precision: str,
                kernel: int, shortcut: bool, cache: int) -> torch.Tensor:
    return run(_plans.cache_by_id(cache), x, weight, bias, max_dim, precision, kernel, shortcut)


@_forward_op.register_fake
def _forward_fake(x, weight, bias, max_dim, precision, kernel, shortcut, cache):
    md, _ = check_args(x, weight, bias, max_dim, precision)
    return x.new_empty((x.shape[0], 1) if md == 1 else (1, weight.shape[0]))


def reference_grads(x, weight, bias, max_dim, grad_out, needs=(True, True, True)):
    """The gradients of the reference Model's output at (x, weight, bias), contracted with grad_out, for the inputs
    flagged in `needs` (None for the others): the chain torch's autograd builds for the Model, op for op."""
    y = torch.nn.functional.linear(x, weight, bias)
    m, idx = torch.max(y, dim=max_dim, keepdim=True)
    z = m - m.mean(dim=1, keepdim=True)
    gz = torch.ops.aten.gelu_backward(grad_out, z)                  # d gelu(z), exact erf form
    gm = gz - gz.sum(dim=1, keepdim=True) / m.shape[1]              # z = m - mean(m, dim 1)
    gy = torch.zeros_like(y).scatter_(max_dim, idx, gm)             # max: one-hot at the arg-max
    gx = gy.mm(weight) if needs[0] else None                        # y = x @ W^T + b
    gw = gy.t().mm(x) if needs[1] else None
    gb = gy.sum(dim=0) if (needs[2] and bias is not None) else None
    return gx, gw, gb


def _setup_context(ctx, inputs, output):
    x, weight, bias, max_dim = inputs[:4]
    ctx.save_for_backward(x, weight, bias)
    ctx.max_dim = max_dim


def _backward(ctx, grad_out):
    x, weight, bias = ctx.saved_tensors
    gx, gw, gb = reference_grads(x, weight, bias, ctx.max_dim, grad_out, ctx.needs_input_grad[:3])
    return gx, gw, gb, None, None, None, None, None


_forward_op.register_autograd(_backward, setup_context=_setup_context)


def direct_ok(x, weight, bias):
    """Whether an eager call may skip the dispatcher: a plain tensor, no dispatch mode (tracing, fake tensors,
    FlopCounterMode, ...) and nothing that autograd must record. Not compiling is checked by the callers first."""
    if type(x) is not torch.Tensor or _dispatch_depth():
        return False
    if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad
                                    or (bias is not None and bias.requires_grad)):
        return False
    return True


@torch.compiler.assume_constant_result
def _kernel_id(kernel):
    """parse_kernel, which torch.compile runs once at trace time (a name is parsed by the library through ctypes,
    which dynamo cannot trace) and bakes in as a constant."""
    return L.parse_kernel(kernel)


def forward(x, weight, bias=None, max_dim=1, *, precision=None, kernel="auto", shortcut=True, cache=None):
    """The model as a function: gelu(max(x @ weight.T + bias, dim=max_dim, keepdim=True) - mean(dim=1)), by
    libmaxgemm. precision: None (from the dtype), 'fp32', 'tf32' or 'bf16'; kernel: 'auto', a registry name or
    number; cache: a PlanCache (default: one shared by every call that names none; it holds the last weights
    given to each of its plans). Differentiable (the reference Model's gradient)."""
    kid = kernel if isinstance(kernel, int) and not isinstance(kernel, bool) else _kernel_id(kernel)
    if not -1 <= kid < 2**31:  # the library's C int: a wider number would be truncated into another kernel's
        raise ValueError(f"kernel {kernel!r}: a registry number is >= 0 (-1 for auto)")
    prec = "auto" if precision is None else precision
    if torch.compiler.is_compiling():  # the shared cache is looked up at run time (id 0), not made while tracing
        return torch.ops.maxgemm.forward.default(x, weight, bias, max_dim, prec, kid, bool(shortcut),
                                                 0 if cache is None else cache.id)
    if cache is None:
        cache = _plans.shared_cache()
    if direct_ok(x, weight, bias):
        return run(cache, x, weight, bias, max_dim, prec, kid, bool(shortcut))
    return torch.ops.maxgemm.forward.default(x, weight, bias, max_dim, prec, kid, bool(shortcut), cache.id)
