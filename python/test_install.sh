#!/usr/bin/env bash
# python/test_install.sh: the maxgemm_torch package on a machine without a GPU (CI), run from anywhere.
#
#   1. finds torch: $PYTHON (default python3) must import it. If it does not: with MAXGEMM_TEST_TORCH set to a pip
#      requirement (`torch`, `torch==2.11.0`) a plain venv gets it from the package index first (PyPI's Linux
#      wheel is the CUDA build: 2.7 GB download, 4.6 GB installed, about 70 s here for torch 2.11); without it this
#      says so and exits 77 (skipped);
#   2. a fresh venv that sees that torch (--system-site-packages; a .pth line to torch's site-packages when
#      $PYTHON is itself a venv's, whose packages a nested venv does not inherit), then `pip install ./python`
#      (a wheel build; it bundles build/libmaxgemm.so when `make` made one);
#   3. from outside the source tree: `import maxgemm_torch` loads the installed copy, which finds the bundled
#      library (version() answers) and, without a CUDA device, ModelNew and the op raise MaxgemmError
#      "maxgemm: no CUDA device ...";
#   4. python/test_cpu.py against the installed package (the op under torch.compile and autograd, the plan cache);
#   5. an editable install (`pip install -e ./python`) in a second venv: loads the repository's build/ library.
# pip needs the package index for the build backend (setuptools) unless it is cached.
# Exit status: 0 all passed, 1 a check failed, 77 no torch. The last line is "N passed, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/maxgemm_test_install.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && exit 0 || exit 1
}

torch_site() { "$1" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null; }
if ! TORCH_SITE=$(torch_site "$PY"); then
  if [ -z "${MAXGEMM_TEST_TORCH:-}" ]; then
    echo "test_install: torch is not importable by $PY ($(command -v "$PY" || echo not found)): skipped."
    echo "  (MAXGEMM_TEST_TORCH=torch installs it into a venv first: PyPI's Linux wheel is the CUDA build,"
    echo "   2.7 GB download and 4.6 GB installed for torch 2.11)"
    exit 77
  fi
  echo "test_install: torch is not importable by $PY: pip install $MAXGEMM_TEST_TORCH (and numpy) into a venv"
  "$PY" -m venv "$WORK/torch_venv" &&
    "$WORK/torch_venv/bin/python" -m pip install --disable-pip-version-check --no-input -q "$MAXGEMM_TEST_TORCH" \
      numpy ||
    { echo "SKIP: pip install $MAXGEMM_TEST_TORCH failed (network or disk): the package test did not run"; exit 77; }
  PY="$WORK/torch_venv/bin/python"
  TORCH_SITE=$(torch_site "$PY") || { echo "FAIL torch installed but not importable"; echo "0 passed, 1 failed"; exit 1; }
fi
echo "test_install: $("$PY" -c 'import sys, torch; print(f"python {sys.version.split()[0]}, torch {torch.__version__}")'), torch from $TORCH_SITE"
LIB="$ROOT/build/libmaxgemm.so"
if [ -f "$LIB" ]; then echo "test_install: $LIB is there: the installed package must bundle it"
else echo "test_install: no $LIB (run make first to test the bundled library): library checks skipped"; fi

# A venv whose python imports the same torch.
make_venv() {
  local venv=$1
  "$PY" -m venv --system-site-packages "$venv" || return 1
  if ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
    local site
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$TORCH_SITE" >"$site/maxgemm_test_torch.pth"
  fi
  "$venv/bin/python" -c 'import torch' || return 1
}

# ---- a regular install -------------------------------------------------------------------------------------------
V="$WORK/venv"
if make_venv "$V"; then ok "venv at $V imports torch"; else bad "venv with torch"; finish; fi
if "$V/bin/python" -m pip install --disable-pip-version-check --no-input -q "$ROOT/python" >"$WORK/pip.log" 2>&1; then
  ok "pip install ./python"
else
  bad "pip install ./python:"; tail -20 "$WORK/pip.log"; finish
fi

cd "$WORK"  # not the source tree: the import below must find the installed copy
check() {  # check NAME PYTHON-CODE: runs in the venv, outside the source tree; stderr shown on failure only
  local name=$1 code=$2 out
  if out=$(env -u MAXGEMM_LIB "$V/bin/python" -c "$code" 2>"$WORK/stderr"); then ok "$name${out:+: $out}"
  else bad "$name:"; echo "$out" | tail -5; tail -15 "$WORK/stderr"; fi
}
check "import maxgemm_torch (the installed copy)" '
import os, sys, maxgemm_torch, torch
site = os.path.realpath(sys.prefix)
assert os.path.realpath(maxgemm_torch.__file__).startswith(site), maxgemm_torch.__file__
assert "maxgemm::forward" in str(torch.ops.maxgemm.forward.default._schema)
print(maxgemm_torch.__version__)'
if [ -f "$LIB" ]; then
  check "the bundled library is found and loads" '
import os, maxgemm_torch
p = maxgemm_torch.library_path()
assert p == os.path.join(os.path.dirname(os.path.abspath(maxgemm_torch.__file__)), "libmaxgemm.so"), p
print("version()", maxgemm_torch.version())'
fi
if "$V/bin/python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "test_install: a CUDA device is present: the no-device checks do not apply"
else
  check "no CUDA device: ModelNew, forward() and the op raise MaxgemmError" '
import torch, maxgemm_torch
x, w, b = torch.rand(4, 64), torch.rand(32, 64), torch.rand(32)
calls = {"ModelNew": lambda: maxgemm_torch.ModelNew(64, 32, 1)(x),
         "forward()": lambda: maxgemm_torch.forward(x, w, b, 0),
         "torch.ops.maxgemm.forward": lambda: torch.ops.maxgemm.forward(x, w, b, 1, "auto", -1, True, 0)}
for name, call in calls.items():
    try:
        call()
    except maxgemm_torch.MaxgemmError as e:
        assert str(e).startswith("maxgemm: no CUDA device") and e.status == 7, (name, e)
        message = str(e)
    else:
        raise AssertionError(name + ": no exception")
print(message[:60] + "...")'
fi

cp "$ROOT/python/test_cpu.py" "$WORK/test_cpu.py"
if env -u MAXGEMM_LIB "$V/bin/python" "$WORK/test_cpu.py" >"$WORK/test_cpu.log" 2>&1; then
  ok "test_cpu.py on the installed package ($(tail -1 "$WORK/test_cpu.log"))"
else
  bad "test_cpu.py on the installed package:"; grep -E "^(FAIL|ERROR)|Error|passed" "$WORK/test_cpu.log" | tail -20
fi

# ---- an editable install -----------------------------------------------------------------------------------------
E="$WORK/venv_editable"
if make_venv "$E" && "$E/bin/python" -m pip install --disable-pip-version-check --no-input -q -e "$ROOT/python" \
    >"$WORK/pip_e.log" 2>&1; then
  if out=$(env -u MAXGEMM_LIB "$E/bin/python" 2>"$WORK/stderr" -c '
import os, sys, maxgemm_torch
root = os.path.realpath(sys.argv[1])
assert os.path.realpath(maxgemm_torch.__file__) == os.path.join(root, "python", "maxgemm_torch", "__init__.py")
p = maxgemm_torch.library_path()
if os.path.exists(os.path.join(root, "build", "libmaxgemm.so")):
    assert os.path.realpath(p) == os.path.join(root, "build", "libmaxgemm.so"), p
    print("loads", p, maxgemm_torch.version())
else:
    assert p is None, p
    print("no library built")' "$ROOT"); then
    ok "pip install -e ./python: $out"
  else
    bad "editable install:"; echo "$out" | tail -5; tail -15 "$WORK/stderr"
  fi
else
  bad "pip install -e ./python:"; tail -20 "$WORK/pip_e.log"
fi
finish
