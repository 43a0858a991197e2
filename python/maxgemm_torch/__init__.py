"""maxgemm_torch: the maxgemm library from PyTorch.

    from maxgemm_torch import ModelNew
    new = ModelNew(8192, 8192, max_dim=1).cuda()
    new.load_state_dict(model.state_dict())    # the reference Model's parameters
    out = new(x)                                # float32 or bfloat16 CUDA tensor in, the same dtype out

ModelNew is a drop-in replacement for the reference Model (SEMANTICS.md); its forward is the custom operator
maxgemm::forward (torch.ops.maxgemm.forward: torch.compile(fullgraph=True) traces it, CUDA graphs capture it,
autograd differentiates it with the Model's gradient). forward() is the same model as a function.

libmaxgemm.so is called through ctypes and opened on first use, from $MAXGEMM_LIB, this package's directory, or the
repository's build/ (library_candidates()). Importing needs only torch; calling needs the library and a CUDA device
(MaxgemmError "maxgemm: no CUDA device ..." otherwise).
"""

import torch  # noqa: F401  (first: libmaxgemm's libcublas dependency resolves to torch's copy)

from ._library import (PRECISIONS, MaxgemmError, library_candidates, library_path, load_library, parse_kernel,
                       version)
from ._ops import OP_NAME, forward, reference_grads
from ._plans import PlanCache
from .model import ModelNew

__version__ = "0.9.0"

__all__ = ["ModelNew", "forward", "PlanCache", "MaxgemmError", "version", "load_library", "library_path",
           "library_candidates", "parse_kernel", "reference_grads", "PRECISIONS", "OP_NAME", "__version__"]
