"""Plans: one libmaxgemm plan per (device, dtype, N, K, max_dim, precision, kernel), sized for the largest batch seen.

A PlanCache belongs to one owner (each ModelNew has its own; maxgemm_torch.forward uses a shared one unless given
another). The per-call path (PlanCache.forward) is a dict lookup, a tuple compare for the weights, the output
allocation and one ctypes call to mg_forward_rows; everything else (creating a plan, growing it, mg_set_weights)
happens on the slow path only when something changed.

  capacity   a plan serves every batch 1 <= m <= its capacity (mg_forward_rows); a larger batch replaces it by
             one of capacity m (the largest batch seen), so a model called with varying batch sizes holds one plan
             per key, not one per size. The kernel ('auto') is chosen for the capacity.
  weights    mg_set_weights runs when the weight or bias tensor differs (data_ptr) or was updated in place
             (torch's version counter, which optimizer steps, load_state_dict and in-place ops under no_grad bump;
             writes through `param.data` and to inference-mode tensors do not: call refresh_weights() after them).
             The plan holds the tensors it was given, so their addresses cannot be reused unnoticed.
  capture    under CUDA graph capture nothing is allocated, prepared or destroyed: the plan must exist with the
             weights set (one call outside capture, the usual warm-up), or MaxgemmError says so. A plan that was
             captured is pinned: the graph holds its buffers and prepared weights, so it is never re-prepared or
             destroyed implicitly (a change of weights or a larger batch makes a new plan, and the pinned one is
             kept, "retired", until release()). Replays read the weights as prepared at capture: kernels that copy
             or split W in mg_set_weights (kernel 6, the fp32 default, and any W whose rows need padding) keep
             reading that copy after an in-place update, so capture again after changing the weights. release()
             (ModelNew: release_plans(), .to(), deletion) frees everything: graphs captured through those plans
             must not be replayed after it.
  threads    a cache's methods hold its lock (ctypes releases the GIL during library calls): threads sharing a
             cache (a ModelNew, or the shared cache) see a consistent set of plans and weights. A plan runs one
             forward at a time on the GPU as well (src/maxgemm.h, "Threads and streams"): threads that share one
             and call it on different streams must order those streams themselves; on one stream (torch's default)
             the stream orders them.
"""

import collections
import ctypes
import itertools
import threading
import weakref

import torch

from . import _library as L

__all__ = ["PlanCache", "shared_cache", "cache_by_id"]

_get_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_is_capturing_c = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None)


def raw_stream(index):
    """The current CUDA stream's handle on device `index`: torch's raw accessor (what its own compiled kernels use)
    costs well under a microsecond; the public torch.cuda.current_stream() builds a Python Stream object per call."""
    if _get_raw_stream is not None:
        return _get_raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


def is_capturing():
    """Whether the current stream (of the current device) is being captured into a CUDA graph."""
    if _is_capturing_c is not None:
        return _is_capturing_c()
    return torch.cuda.is_current_stream_capturing()


def version_of(t):
    """torch's in-place modification counter; inference-mode tensors have none (None: their in-place updates are
    not seen, call refresh_weights() after them)."""
    try:
        return t._version
    except RuntimeError:
        return None


def weights_key(w, b):
    return (w.data_ptr(), version_of(w), 0 if b is None else b.data_ptr(), None if b is None else version_of(b))


# Plans whose destruction was asked for while a stream was being captured (mg_plan_destroy frees device memory,
# which a capture forbids); destroyed at the next slow-path call outside capture.
_deferred = []
_module_lock = threading.RLock()  # _deferred and the shared cache's creation (re-entrant: __del__ may run inside)


def _flush_deferred():
    while not is_capturing():
        with _module_lock:
            if not _deferred:
                return
            plan = _deferred.pop()
        plan.close()


class _Plan:
    """One mg_plan, its capacity, and the weight tensors it was given (held: the library reads them at every
    forward, and holding them means a new tensor can never reuse their address unnoticed)."""

    def __init__(self, lib, key, capacity, shortcut, options):
        device, dtype, n, k, max_dim, prec, kernel = key
        self.lib = lib  # held so that destruction at interpreter exit still finds the library
        self.forward_rows = lib.mg_forward_rows
        self.key = key
        self.capacity = capacity
        desc = lib.mg_plan_desc_default()
        desc.m, desc.n, desc.k = capacity, n, k
        desc.max_dim = max_dim
        desc.precision = L.PRECISIONS[prec]
        desc.kernel = kernel
        desc.shortcut = int(bool(shortcut))
        handle = ctypes.c_void_p()
        L.check(lib, lib.mg_plan_create(ctypes.byref(handle), ctypes.byref(desc)), "mg_plan_create")
        self.handle = handle.value
        self.shortcut = bool(shortcut)
        self.weights_key = None
        self.weight_sets = 0  # how many times mg_set_weights ran (plan_info; the checks use it)
        self.captured = False
        self.keep = ()
        if options:
            try:
                L.apply_options(lib, self.handle, options)
            except L.MaxgemmError:
                self.close()
                raise

    def set_weights(self, w, b, key, stream):
        self.weights_key = None  # a failure below leaves the plan without weights (the library agrees)
        wt = w.detach()
        wt = wt if wt.is_contiguous() else wt.contiguous()  # the library reads W as dense N x K
        if b is not None:
            bt = b.detach()
            bt = bt if bt.is_contiguous() else bt.contiguous()
        else:  # the library always adds a bias: nn.Linear(bias=False) is a bias of zeros
            bt = torch.zeros(w.shape[0], dtype=w.dtype, device=w.device)
        L.check(self.lib, self.lib.mg_set_weights(self.handle, wt.data_ptr(), bt.data_ptr(), stream),
                "mg_set_weights")
        self.keep = (wt, bt, w.detach(), None if b is None else b.detach())
        self.weights_key = key
        self.weight_sets += 1

    def set_shortcut(self, on):
        L.check(self.lib, self.lib.mg_plan_set_shortcut(self.handle, int(bool(on))), "mg_plan_set_shortcut")
        self.shortcut = bool(on)

    def info(self):
        device, dtype, n, k, max_dim, prec, kernel = self.key
        return {"device": f"cuda:{device}", "dtype": str(dtype).replace("torch.", ""), "n": n, "k": k,
                "max_dim": max_dim, "precision": prec, "capacity": self.capacity,
                "kernel": self.lib.mg_plan_kernel(self.handle),
                "kernel_name": self.lib.mg_plan_kernel_name(self.handle).decode(),
                "shortcut": self.shortcut, "weight_sets": self.weight_sets, "captured": self.captured,
                "options": L.plan_options(self.lib, self.handle)}

    def close(self):
        """mg_plan_destroy (deferred while a capture is in progress). cudaFree waits for work in flight on the device,
        so buffers a queued forward still uses are not released under it."""
        if not self.handle:
            return
        if is_capturing():
            with _module_lock:
                _deferred.append(self)
            return
        handle, self.handle = self.handle, None
        self.keep = ()
        self.lib.mg_plan_destroy(handle)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing sensible left to do
            pass


_ids = itertools.count(1)
_caches = weakref.WeakValueDictionary()


class PlanCache:
    """The plans of one owner (a ModelNew, or the shared cache of maxgemm_torch.forward): at most max_plans live
    ones, least recently used replaced first, plus the retired plans that CUDA graphs captured (see the module
    docstring). `options`: a dict of mg_options fields applied to every plan (make_options)."""

    max_plans = 4

    def __init__(self, options=None):
        self.id = next(_ids)  # what the custom op carries to find this cache (cache_by_id)
        self.options = L.make_options(options)
        self._options_given = None if options is None else dict(options)
        self._plans = collections.OrderedDict()
        self._retired = []
        self._lock = threading.RLock()
        _caches[self.id] = self

    def __reduce__(self):
        # copy.deepcopy and pickle: plans are device handles, never copied; a copy starts empty with its own id.
        return (PlanCache, (self._options_given,))

    # ---- the per-call path -----------------------------------------------------------------------------------
    def forward(self, x, w, b, m, device, max_dim, prec, kernel, shortcut):
        """out = the model on x's first m rows (x: dense, on `device`, which is current). Enqueued on the current
        stream; under graph capture only a plan made and weighted beforehand is used."""
        with self._lock:
            return self._forward(x, w, b, m, device, max_dim, prec, kernel, shortcut)

    def _forward(self, x, w, b, m, device, max_dim, prec, kernel, shortcut):
        stream = raw_stream(device)
        capturing = is_capturing()
        key = (device, x.dtype, w.shape[0], w.shape[1], max_dim, prec, kernel)
        wkey = weights_key(w, b)
        plan = self._plans.get(key)
        if plan is None or m > plan.capacity or plan.weights_key != wkey:
            plan = self._prepare(key, m, w, b, wkey, stream, capturing, shortcut)
        elif len(self._plans) > 1:
            self._plans.move_to_end(key)
        if plan.shortcut != shortcut:
            plan.set_shortcut(shortcut)
        if capturing:
            plan.captured = True
        out = x.new_empty((m, 1) if max_dim == 1 else (1, w.shape[0]))
        status = plan.forward_rows(plan.handle, m, x.data_ptr(), out.data_ptr(), stream)
        if status != 0:
            L.check(plan.lib, status, "mg_forward_rows")
        return out

    # ---- the slow path ---------------------------------------------------------------------------------------
    def _prepare(self, key, m, w, b, wkey, stream, capturing, shortcut):
        plan = self._plans.get(key)
        if capturing:
            if plan is None or m > plan.capacity:
                have = "no plan" if plan is None else f"only a plan for up to {plan.capacity} rows"
                raise L.MaxgemmError(
                    f"maxgemm: CUDA graph capture of a batch of {m} rows found {have} ({key_desc(key)}): a plan "
                    f"allocates device memory, which a capture forbids. Call the model once outside the capture "
                    f"first (the usual warm-up) with a batch of at least {m} rows.", L.STATUS_PYTHON)
            raise L.MaxgemmError(
                "maxgemm: the weights changed (another tensor, or an in-place update) since the last call outside "
                "CUDA graph capture, and preparing them (mg_set_weights) allocates device memory, which a capture "
                "forbids. Call the model once outside the capture after changing the weights.", L.STATUS_PYTHON)
        _flush_deferred()
        if plan is not None and (m > plan.capacity or plan.captured):
            # A larger batch, or new weights for a plan a graph holds: a new plan (at least as large) replaces it.
            m = max(m, plan.capacity)
            del self._plans[key]
            self._discard(plan)
            plan = None
        if plan is None:
            while len(self._plans) >= max(1, self.max_plans):
                self._discard(self._plans.popitem(last=False)[1])
            plan = _Plan(L.load_library(), key, m, shortcut, self.options)
            self._plans[key] = plan
        else:
            self._plans.move_to_end(key)
        if plan.weights_key != wkey:
            plan.set_weights(w, b, wkey, stream)
        return plan

    def _discard(self, plan):
        if plan.captured:
            self._retired.append(plan)  # a graph may still replay it: kept until release()
        else:
            plan.close()

    # ---- bookkeeping -----------------------------------------------------------------------------------------
    def release(self):
        """Destroys every plan, retired ones included (graphs captured through them must not be replayed after)."""
        with self._lock:
            while self._plans:
                self._plans.popitem(last=False)[1].close()
            while self._retired:
                self._retired.pop().close()
        _flush_deferred()

    def refresh_weights(self):
        """Forces mg_set_weights at the next call (needed only after writes the version counter does not see)."""
        with self._lock:
            for plan in self._plans.values():
                plan.weights_key = None

    def set_options(self, options):
        """Replaces the options of every live plan and of those made later (retired plans keep theirs)."""
        if is_capturing():  # mg_plan_set_options drops the plans' graphs, waiting for their launches
            raise L.MaxgemmError("maxgemm: set_options during CUDA graph capture: set them before the capture",
                                 L.STATUS_PYTHON)
        overrides = L.make_options(options)
        with self._lock:
            for plan in self._plans.values():
                L.apply_options(plan.lib, plan.handle, overrides or {})
            self.options = overrides
            self._options_given = None if options is None else dict(options)

    def info(self):
        """One dict per live plan (plan_info), then the retired ones with "retired": True."""
        with self._lock:
            rows = [dict(p.info(), retired=False) for p in self._plans.values()]
            return rows + [dict(p.info(), retired=True) for p in self._retired]

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


def key_desc(key):
    device, dtype, n, k, max_dim, prec, kernel = key
    return (f"cuda:{device}, {str(dtype).replace('torch.', '')}, N={n} K={k}, max_dim {max_dim}, {prec}, "
            f"kernel {'auto' if kernel == L.KERNEL_AUTO else kernel}")


_shared = None


def shared_cache():
    """The cache of maxgemm_torch.forward calls that name none (and of op calls whose cache id is unknown)."""
    global _shared
    if _shared is None:
        with _module_lock:
            if _shared is None:
                _shared = PlanCache()
    return _shared


def cache_by_id(cache_id):
    cache = _caches.get(cache_id) if cache_id else None
    return cache if cache is not None else shared_cache()
