"""ModelNew: the reference Model (SEMANTICS.md) as a drop-in nn.Module computed by libmaxgemm.

    out = gelu(max(x @ W^T + b, dim=max_dim, keepdim=True) - mean(dim=1, keepdim=True))

Same constructor arguments, same parameters under the same names (gemm.weight, gemm.bias), so
`ModelNew(...).load_state_dict(Model(...).state_dict())` works. The forward is the custom op maxgemm::forward
(_ops.py): torch.compile sees one node, CUDA graphs capture the library's launches, backward is the Model's gradient.
Each module owns a PlanCache (_plans.py): plans are made on first use and kept per (device, dtype, precision),
sized for the largest batch seen.
"""

import torch
from torch import nn

from . import _library as L
from . import _ops
from ._plans import PlanCache

__all__ = ["ModelNew"]


class ModelNew(nn.Module):
    """Model(in_features, out_features, max_dim) computed by libmaxgemm.

    kernel:    'auto' (the library's choice for the plan's batch capacity: this GPU's measured dispatch table, else
               the registry's rule), or a registry name or number (see `build/maxgemm list`).
    precision: None picks from the input dtype: float32 -> 'fp32' (bar 1e-4), bfloat16 -> 'bf16' (bar 1e-2);
               'tf32' asks for the lossy tensor-core mode (bar 2e-3) on float32 inputs.
    shortcut:  max_dim 1 only: use the library's exact certificate (an all-finite, non-overflowing row is +0.0
               without a GEMM). It may be changed at any time by assigning .shortcut.
    options:   a dict of mg_options fields for every plan (tiles, streamk, mixed_panels, rem_split, pdl,
               shortcut_mode, verbose, splits, x_tile, cluster, fuse, mcast, w_rows; values as the CLI spells them),
               None for the library's defaults.
    """

    def __init__(self, in_features, out_features, max_dim, *, kernel="auto", precision=None, shortcut=True,
                 options=None):
        super().__init__()
        if isinstance(max_dim, bool) or not isinstance(max_dim, int) or max_dim not in (-2, -1, 0, 1):
            raise ValueError(f"max_dim must be -2, -1, 0 or 1 (the dims of a 2-D tensor), got {max_dim!r}")
        if precision is not None and precision not in L.PRECISIONS:
            raise ValueError(f"precision must be None, 'fp32', 'tf32' or 'bf16', got {precision!r}")
        kernel_id = L.parse_kernel(kernel)  # a name is checked now (and before allocating W), not at the first call
        cache = PlanCache(options)  # checks the options' names and values
        self.gemm = nn.Linear(in_features, out_features)
        self.in_features = in_features
        self.out_features = out_features
        self.max_dim = max_dim
        self.precision = precision
        self.shortcut = bool(shortcut)
        self.kernel = kernel
        self._kernel_id = kernel_id
        self._precision_arg = "auto" if precision is None else precision
        self._cache = cache

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, max_dim={self.max_dim}, "
                f"kernel={self.kernel!r}, precision={self.precision!r}, shortcut={self.shortcut}")

    # ---- forward ---------------------------------------------------------------------------------------------
    def forward(self, x):
        # Eager calls go straight to the implementation (the dispatcher would cost more host time than the rest of
        # the call); torch.compile, tracing modes and autograd get the custom op. Both run _ops.run.
        if not torch.compiler.is_compiling():
            params = self._modules["gemm"]._parameters  # the module dicts: no nn.Module.__getattr__ per call
            w, b = params["weight"], params["bias"]
            if _ops.direct_ok(x, w, b):
                return _ops.run(self._cache, x, w, b, self.max_dim, self._precision_arg, self._kernel_id,
                                self.shortcut)
        return torch.ops.maxgemm.forward.default(x, self.gemm.weight, self.gemm.bias, self.max_dim,
                                                 self._precision_arg, self._kernel_id, self.shortcut, self._cache.id)

    # ---- plans -----------------------------------------------------------------------------------------------
    @property
    def max_cached_plans(self):
        """How many plans the module keeps live (least recently used replaced first); 4 by default."""
        return self._cache.max_plans

    @max_cached_plans.setter
    def max_cached_plans(self, n):
        self._cache.max_plans = int(n)

    def release_plans(self):
        """Destroys every plan, those CUDA graphs captured included (they are re-created on demand; graphs
        captured through this module must not be replayed after this)."""
        self._cache.release()

    def refresh_weights(self):
        """Forces mg_set_weights at the next call: needed only after writes torch's version counter does not see
        (through `param.data`, or to inference-mode tensors)."""
        self._cache.refresh_weights()

    def set_options(self, options):
        """Replaces the mg_options of every plan (a dict as in the constructor; None: the library's defaults)."""
        self._cache.set_options(options)

    def plan_info(self):
        """One dict per plan: device, dtype, n, k, max_dim, precision, capacity (the largest batch it serves),
        kernel (number) and kernel_name, shortcut, weight_sets (mg_set_weights calls), captured (by a CUDA graph),
        options, retired (replaced but kept for a captured graph)."""
        return self._cache.info()

    def _apply(self, fn, *args, **kwargs):
        # .to()/.cuda()/.bfloat16() replace the parameters: plans made for the old ones must not keep them alive.
        self.release_plans()
        return super()._apply(fn, *args, **kwargs)
