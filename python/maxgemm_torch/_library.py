"""The ctypes layer over libmaxgemm.so: finding and loading the library, the C structs, errors, name parsing.

Nothing here is loaded at import: the library is opened by the first call that needs it (load_library), so
`import maxgemm_torch` works on any machine with torch, with or without the library or a GPU.

Search order (library_candidates): $MAXGEMM_LIB (used alone when set), then libmaxgemm.so in this package's
directory (a `pip install ./python` after `make` copies it there), then the repository's build/libmaxgemm.so
relative to this file (the source tree itself, or an editable `pip install -e ./python`).
"""

import ctypes
import os

__all__ = ["MaxgemmError", "load_library", "library_path", "library_candidates", "version", "parse_kernel",
           "make_options", "apply_options", "plan_options", "options_dict", "PRECISIONS", "KERNEL_AUTO",
           "LIBRARY_NAME"]

LIBRARY_NAME = "libmaxgemm.so"

# enum mg_precision and MG_KERNEL_AUTO in src/maxgemm.h (their values are part of the public ABI).
PRECISIONS = {"fp32": 0, "tf32": 1, "bf16": 2}
KERNEL_AUTO = -1

# enum mg_status: the ones raised from Python as well. -1 marks an error found by maxgemm_torch itself.
STATUS_SHAPE = 2
STATUS_NO_DEVICE = 7
STATUS_PYTHON = -1

# The enums of struct mg_options (src/maxgemm.h, shortcut.h), name -> value; make_options checks names against them.
TILES = {"auto": 0, "main": 1, "mid": 2, "small": 3, "n192": 4}
SWITCH = {"auto": 0, "off": 1, "force": 2}
SHORTCUT_MODES = {"graph": 0, "poll": 1, "sync": 2, "tail": 3}
MCAST = {"auto": 0, "w": 1, "x": 2}
OPTION_FIELDS = ("tiles", "streamk", "mixed_panels", "rem_split", "pdl", "shortcut_mode", "verbose", "splits",
                 "x_tile", "cluster", "fuse", "mcast", "w_rows")
SPLITS_MAX = 16  # MG_SPLITS_MAX
X_TILE_MAX = 256  # MG_X_TILE_MAX
# Kernel 8's integer options: name -> (accepts(value), what the message says it must be).
INT_OPTIONS = {
    "splits": (lambda v: 0 <= v <= SPLITS_MAX, f"an int in 0 .. {SPLITS_MAX} (0: the kernel's policy)"),
    "x_tile": (lambda v: 0 <= v <= X_TILE_MAX and v % 8 == 0,
               f"0 (the kernel's policy) or a multiple of 8 up to {X_TILE_MAX}"),
    "cluster": (lambda v: v in (0, 1, 2), "0 (the kernel's configuration), 1 or 2"),
    "w_rows": (lambda v: v in (0, 64, 128, 256), "0 (the kernel's policy), 64, 128 or 256"),
}


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


class Options(ctypes.Structure):
    """struct mg_options: {mg_tiles tiles; mg_switch streamk, mixed_panels, rem_split; int pdl, shortcut_mode,
    verbose, splits, x_tile, cluster; mg_switch fuse; mg_mcast mcast; int w_rows}: thirteen ints, 52 bytes."""
    _fields_ = [(name, ctypes.c_int) for name in OPTION_FIELDS]


class MaxgemmError(RuntimeError):
    """A libmaxgemm call failed, or maxgemm_torch refused a call it cannot make safely. .status is the mg_status
    number (src/maxgemm.h; 7 = MG_ERR_NO_DEVICE), or -1 for a refusal of maxgemm_torch's own."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def no_device_error():
    import torch
    why = "torch.cuda.is_available() is False"
    if torch.version.cuda is None:
        why += f" (this torch, {torch.__version__}, is built without CUDA)"
    return MaxgemmError(f"maxgemm: no CUDA device is available ({why}); maxgemm runs on NVIDIA GPUs only "
                        f"(Hopper, sm_90a, for the tensor-core kernels): use the reference Model on this machine",
                        STATUS_NO_DEVICE)


def library_candidates():
    """Where load_library looks, in order: [$MAXGEMM_LIB] when it is set, otherwise the package directory, then the
    repository's build/ (two levels above this package: python/maxgemm_torch -> the repository root)."""
    env = os.environ.get("MAXGEMM_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, LIBRARY_NAME),
            os.path.normpath(os.path.join(here, "..", "..", "build", LIBRARY_NAME))]


def library_path():
    """The path load_library opens (or opened): the first candidate that exists, or None if none does."""
    if _lib is not None:
        return _lib_path
    for path in library_candidates():
        if os.path.exists(path):
            return path
    return None


_lib = None
_lib_path = None


def _declare(lib, path):
    """Declares every prototype used here; a wrong prototype would pass garbage silently, so each one mirrors
    src/maxgemm.h (or src/mg_kernel.h for the registry parser) exactly."""
    c_int, c_int64, c_void_p, c_char_p = ctypes.c_int, ctypes.c_int64, ctypes.c_void_p, ctypes.c_char_p
    protos = {
        "mg_version": ([], c_char_p),
        "mg_plan_desc_size": ([], ctypes.c_size_t),
        "mg_options_size": ([], ctypes.c_size_t),
        "mg_plan_desc_default": ([], PlanDesc),
        "mg_options_default": ([], Options),
        "mg_plan_create": ([ctypes.POINTER(c_void_p), ctypes.POINTER(PlanDesc)], c_int),
        "mg_set_weights": ([c_void_p, c_void_p, c_void_p, c_void_p], c_int),
        "mg_forward_rows": ([c_void_p, c_int64, c_void_p, c_void_p, c_void_p], c_int),
        "mg_plan_destroy": ([c_void_p], None),
        "mg_plan_kernel": ([c_void_p], c_int),
        "mg_plan_kernel_name": ([c_void_p], c_char_p),
        "mg_plan_set_shortcut": ([c_void_p, c_int], c_int),
        "mg_plan_set_options": ([c_void_p, ctypes.POINTER(Options)], c_int),
        "mg_plan_get_options": ([c_void_p, ctypes.POINTER(Options)], c_int),
        "mg_strerror": ([c_int], c_char_p),
        "mg_last_error": ([], c_char_p),
        # Internal (src/mg_kernel.h) but exported: the registry's own name/number parser, so Python never keeps a
        # copy of the kernel table that could drift from src/registry.c.
        "mg_registry_parse": ([c_char_p, ctypes.POINTER(c_int)], c_int),
    }
    for name, (argtypes, restype) in protos.items():
        try:
            fn = getattr(lib, name)
        except AttributeError as e:
            raise OSError(f"{path} does not export {name}: it is older than this maxgemm_torch; rebuild it "
                          f"(make build/libmaxgemm.so) and reinstall the package if it holds a copy") from e
        fn.argtypes = argtypes
        fn.restype = restype
    # Layout self-checks: the library's own sizes of the structs (a field added in C and not here would otherwise
    # let mg_plan_get_options write past Options), then the defaults documented in maxgemm.h, which land in the right
    # fields only if the Python structs mirror the C ones (a shifted field shows up as kernel != -1, pdl != 1, ...).
    for cname, cls in (("mg_plan_desc", PlanDesc), ("mg_options", Options)):
        csize = getattr(lib, cname + "_size")()
        if csize != ctypes.sizeof(cls):
            raise OSError(f"{path}: sizeof({cname}) is {csize} bytes in the library and {ctypes.sizeof(cls)} in "
                          f"maxgemm_torch's {cls.__name__}: the package and the library are from different versions")
    d = lib.mg_plan_desc_default()
    if ctypes.sizeof(PlanDesc) != 40 or d.kernel != KERNEL_AUTO or d.precision not in PRECISIONS.values() \
            or d.shortcut not in (0, 1) or min(d.m, d.n, d.k) <= 0:
        raise OSError(f"{path}: mg_plan_desc layout does not match maxgemm_torch's PlanDesc (default desc read as "
                      f"m={d.m} n={d.n} k={d.k} max_dim={d.max_dim} precision={d.precision} kernel={d.kernel} "
                      f"shortcut={d.shortcut})")
    o = lib.mg_options_default()
    if ctypes.sizeof(Options) != 52 or o.tiles != 0 or o.pdl != 1 or o.verbose != 0 or o.splits != 0 \
            or o.x_tile != 0 or o.cluster != 0 or o.fuse != 0 or o.mcast != 0 or o.w_rows != 0 \
            or o.shortcut_mode not in SHORTCUT_MODES.values():
        raise OSError(f"{path}: mg_options layout does not match maxgemm_torch's Options (defaults read as "
                      f"{options_dict(o)})")


def load_library():
    """Opens libmaxgemm.so once (library_candidates' order) and declares its prototypes; OSError naming every path
    tried and the build command when none loads."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    # torch first: it has loaded libcublas.so.13 (its own copy), and the library's dependency resolves to it.
    import torch  # noqa: F401
    tried = []
    for path in library_candidates():
        if not os.path.exists(path):
            tried.append(f"{path} (not found)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        _declare(lib, path)
        _lib, _lib_path = lib, path
        return lib
    raise OSError("cannot load libmaxgemm: tried " + "; ".join(tried) + ". Build it with `make build/libmaxgemm.so` "
                  "in the repository root (then `pip install ./python` copies it into the package), or point "
                  "MAXGEMM_LIB at it.")


def version():
    """The library's version, "MAJOR.MINOR.PATCH" (mg_version): loads the library."""
    return load_library().mg_version().decode()


def error_text(lib, status):
    text = lib.mg_strerror(status).decode(errors="replace")
    detail = lib.mg_last_error().decode(errors="replace")
    return f"{text}: {detail}" if detail else text


def check(lib, status, what):
    if status != 0:
        raise MaxgemmError(f"maxgemm {what} failed: {error_text(lib, status)}", status)


def parse_kernel(kernel):
    """'auto' (-1, without loading the library), or a registry name ('cublas', 'wgmma_ws', ...) or number -> the
    number, parsed by the library's registry (src/registry.c); ValueError for anything it does not know."""
    if isinstance(kernel, bool) or not isinstance(kernel, (int, str)):
        raise TypeError(f"kernel must be 'auto', a kernel name or a registry number, not {kernel!r}")
    if kernel == "auto" or kernel == KERNEL_AUTO:
        return KERNEL_AUTO
    lib = load_library()
    out = ctypes.c_int(0)
    status = lib.mg_registry_parse(str(kernel).encode(), ctypes.byref(out))
    if status != 0:
        raise ValueError(f"kernel {kernel!r}: {lib.mg_last_error().decode(errors='replace')}")
    return out.value


def _option_value(name, value):
    if name == "tiles":
        table = TILES
    elif name in ("streamk", "mixed_panels", "rem_split", "fuse"):
        table = SWITCH
    elif name == "shortcut_mode":
        table = SHORTCUT_MODES
    elif name == "mcast":
        table = MCAST
    elif name in INT_OPTIONS:  # kernel 8's integer options: an int (not a bool) its predicate accepts
        ok, what = INT_OPTIONS[name]
        if not isinstance(value, bool) and isinstance(value, int) and ok(value):
            return value
        raise ValueError(f"option {name} must be {what}, got {value!r}")
    else:  # pdl, verbose: booleans
        if isinstance(value, (bool, int)) and int(value) in (0, 1):
            return int(value)
        raise ValueError(f"option {name} must be True or False, got {value!r}")
    if isinstance(value, str) and value in table:
        return table[value]
    raise ValueError(f"option {name} must be one of {', '.join(map(repr, table))}, got {value!r}")


def make_options(options):
    """A dict of mg_options fields, values spelled as the CLI spells them (tiles='main', streamk='off',
    mixed_panels='force', rem_split='off', pdl=False, shortcut_mode='poll', verbose=True) -> {field: C value},
    checked here without the library so that a typo fails at construction; None -> None (the library's defaults).
    Fields left out keep the library's defaults (apply_options starts from mg_options_default())."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict of mg_options fields, got {type(options).__name__}")
    unknown = set(options) - set(OPTION_FIELDS)
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; the fields are {', '.join(OPTION_FIELDS)}")
    return {name: _option_value(name, value) for name, value in options.items()}


def apply_options(lib, handle, overrides):
    """mg_plan_set_options(handle, mg_options_default() with the overrides of make_options)."""
    o = lib.mg_options_default()
    for name, value in overrides.items():
        setattr(o, name, value)
    check(lib, lib.mg_plan_set_options(handle, ctypes.byref(o)), "mg_plan_set_options")


def plan_options(lib, handle):
    """The plan's options (mg_plan_get_options) as a readable dict."""
    o = Options()
    check(lib, lib.mg_plan_get_options(handle, ctypes.byref(o)), "mg_plan_get_options")
    return options_dict(o)


def options_dict(o):
    """An Options struct -> {field: readable value} (the inverse of make_options)."""
    def name_of(table, v):
        return next((k for k, x in table.items() if x == v), v)
    return {"tiles": name_of(TILES, o.tiles), "streamk": name_of(SWITCH, o.streamk),
            "mixed_panels": name_of(SWITCH, o.mixed_panels), "rem_split": name_of(SWITCH, o.rem_split),
            "pdl": bool(o.pdl), "shortcut_mode": name_of(SHORTCUT_MODES, o.shortcut_mode), "verbose": bool(o.verbose),
            "splits": o.splits, "x_tile": o.x_tile, "cluster": o.cluster, "fuse": name_of(SWITCH, o.fuse),
            "mcast": name_of(MCAST, o.mcast), "w_rows": o.w_rows}
