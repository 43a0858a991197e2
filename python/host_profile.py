"""Where an isolated ModelNew call spends its host time (GPU host with PyTorch; notes/pytorch.md).

Times, per call, with time.perf_counter over many calls (a stream sync every 32 calls keeps the launch queue
short, outside the timed spans):
  module call       model(x): what a caller pays (nn.Module.__call__ + forward; the direct path, no dispatcher)
  forward           model.forward(x): without nn.Module.__call__
  op (dispatcher)   torch.ops.maxgemm.forward.default(...): the same work through torch's dispatcher, as
                    torch.compile's code and autograd call it
  new_empty         x.new_empty((M, 1)): the output allocation alone
  mg_forward_rows   the ctypes call into libmaxgemm alone (plan, pointers and stream prepared beforehand)
  event record      torch.cuda.Event.record(): for scale (the timing harness records two per call)
Run: MAXGEMM_LIB=build/libmaxgemm.so python3 python/host_profile.py [--dtype fp32|bf16]
"""

import argparse
import statistics
import time

import torch

import maxgemm_torch  # python/, this script's directory, is first on sys.path: the source tree's package
from maxgemm_torch import _plans


def per_call_us(fn, calls, rounds=5, sync_every=32):
    """Median over rounds of the mean host time per call, in microseconds."""
    res = []
    for _ in range(rounds):
        total = 0.0
        done = 0
        while done < calls:
            n = min(sync_every, calls - done)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            total += time.perf_counter() - t0
            done += n
        res.append(total * 1e6 / calls)
    return statistics.median(res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--features", type=int, default=8192)
    a = ap.parse_args()
    dt = torch.float32 if a.dtype == "fp32" else torch.bfloat16
    torch.manual_seed(0)
    torch.set_grad_enabled(False)
    model = maxgemm_torch.ModelNew(a.features, a.features, 1).cuda().to(dt)
    x = torch.rand(a.batch, a.features, device="cuda", dtype=dt)
    for _ in range(5):
        model(x)
    torch.cuda.synchronize()
    info = model.plan_info()[0]
    plan = next(iter(model._cache._plans.values()))
    out = model(x)
    stream = _plans.raw_stream(x.get_device())
    xp, op, handle, fwd = x.data_ptr(), out.data_ptr(), plan.handle, plan.forward_rows
    w, b, cache_id = model.gemm.weight, model.gemm.bias, model._cache.id
    ev = torch.cuda.Event(enable_timing=True)
    rows = [
        ("module call", lambda: model(x)),
        ("forward", lambda: model.forward(x)),
        ("op (dispatcher)", lambda: torch.ops.maxgemm.forward.default(x, w, b, 1, "auto", -1, True, cache_id)),
        ("new_empty", lambda: x.new_empty((a.batch, 1))),
        ("mg_forward_rows", lambda: fwd(handle, a.batch, xp, op, stream)),
        ("event record", lambda: ev.record()),
    ]
    print(f"host time per call, {a.dtype}, M={a.batch} N=K={a.features}, short-circuit on, "
          f"kernel ({info['kernel']}, {info['kernel_name']!r}), torch {torch.__version__}")
    for name, fn in rows:
        print(f"  {name:16s} {per_call_us(fn, a.calls):7.2f} us")
    torch.cuda.synchronize()
    model.release_plans()


if __name__ == "__main__":
    main()
