#!/usr/bin/env bash
# tools/gpu_session.sh: everything the project runs on a GPU host, in one call, from a `make bundle` tree.
#   tools/gpu_session.sh OUTDIR [steps...]      steps: info tests checks scbench bench ncu ncusc santail sanitize python pipinstall soak
#                                                 (default: all but santail and pipinstall; scbench = the
#                                                  short-circuit side by side, every mode;
#                                                  ncusc = ncu of the short-circuit's classify kernel)
# Logs and CSVs land in OUTDIR; a summary is printed last. The GPU host needs only the driver, CUDA's cuBLAS and
# (for `python`) PyTorch: Criterion and the other non-system libraries travel in bundle/lib. The summary lines of the
# runs come from the CSV rows they append (--csv; columns by name through tools/csvsel.awk), not from printed text.
set -u
OUT=${1:?usage: tools/gpu_session.sh OUTDIR [steps...]}
shift
STEPS=${*:-info tests checks scbench bench ncu ncusc sanitize python soak}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/bundle/bin
CUBLAS_DIRS=$(ls -d /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib 2>/dev/null | tr '\n' ':')
PYCUBLAS=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$ROOT/bundle/lib:${CUBLAS_DIRS}${PYCUBLAS}:${LD_LIBRARY_PATH:-}
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
t0=$(date +%s)
stamp() { say "[$(($(date +%s) - t0))s] $*"; }
# lastrow CSV COLS: the named columns of the last row of a CLI --csv file, space-separated (NaN: empty).
lastrow() { [ -s "$1" ] && awk -F, -f "$ROOT/tools/csvsel.awk" -v cols="$2" "$1" | tail -1; }
RUNCOLS=name,precision,max_dim,shortcut_mode_used,median_ms,tflops,gbps,x_kernel0,max_err,pass

if has info; then
  stamp "info"
  { nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv;
    ldd "$B/maxgemm"; "$B/maxgemm" list; } >"$OUT/info.log" 2>&1
  grep -E "H200|H100|not found" "$OUT/info.log" | head -5 | tee -a "$SUMMARY"
fi

if has tests; then
  stamp "tests: Criterion, every suite (GPU suites included), --jobs 1"
  timeout ${TEST_TIMEOUT:-420} "$B/test_maxgemm" --jobs 1 --verbose ${TEST_ARGS:-} >"$OUT/tests.log" 2>&1
  say "tests exit $?"
  grep -E "^\[(FAIL|----)\]|Synthesis|Tested" "$OUT/tests.log" | tail -40 | tee -a "$SUMMARY"
fi

if has checks; then
  stamp "checks: every kernel x claimed precision x max_dim at the headline, --check, full compute"
  "$B/maxgemm" list --csv "$OUT/registry.csv" >>"$OUT/checks.log" 2>&1
  for kid in $(awk -F, -f "$ROOT/tools/csvsel.awk" -v where=built=1 -v cols=id "$OUT/registry.csv"); do
    precs=$(awk -F, -f "$ROOT/tools/csvsel.awk" -v where="id=$kid" -v cols=precisions "$OUT/registry.csv" | tr ';' ' ')
    for p in $precs; do
      for md in 1 0; do
        if [ "$kid" = 1 ] && [ "$p" != fp32 ]; then continue; fi
        it=10; [ "$kid" = 1 ] && it=2
        rows=$(wc -l <"$OUT/checks.csv" 2>/dev/null || echo 0)
        timeout 120 "$B/maxgemm" run --kernel "$kid" --precision "$p" --max-dim "$md" --check --no-shortcut \
          --iters $it --warmup 1 --csv "$OUT/checks.csv" >>"$OUT/checks.log" 2>&1
        rc=$?
        if [ "$(wc -l <"$OUT/checks.csv" 2>/dev/null || echo 0)" -gt "$rows" ]; then
          say "k$kid $p md$md rc=$rc $RUNCOLS: $(lastrow "$OUT/checks.csv" "$RUNCOLS")"
        else
          say "k$kid $p md$md rc=$rc no row: $(tail -1 "$OUT/checks.log" | cut -c1-200)"
        fi
      done
    done
  done
  for mode in ${SC_MODES:-tail graph poll sync}; do
    for fl in "" --no-flush; do
      for p in fp32 bf16; do
        stamp "short-circuit, default job, --shortcut-mode $mode $p $fl"
        rm -f "$OUT/scrun.csv"
        timeout 60 "$B/maxgemm" run --check --iters 50 --precision $p --shortcut-mode $mode $fl \
          --csv "$OUT/scrun.csv" >>"$OUT/checks.log" 2>&1
        rc=$?
        if [ -s "$OUT/scrun.csv" ]; then
          say "shortcut $mode $p ${fl:-flushed} rc=$rc $RUNCOLS: $(lastrow "$OUT/scrun.csv" "$RUNCOLS")"
          [ -s "$OUT/shortcut_checks.csv" ] || head -1 "$OUT/scrun.csv" >"$OUT/shortcut_checks.csv"
          tail -n +2 "$OUT/scrun.csv" >>"$OUT/shortcut_checks.csv"
        else
          say "shortcut $mode $p ${fl:-flushed} rc=$rc no row: $(tail -1 "$OUT/checks.log" | cut -c1-200)"
        fi
      done
    done
  done
  rm -f "$OUT/scrun.csv"
fi

if has scbench && [ -x "$B/maxgemm_bench" ]; then
  # bench/matrix_shortcut.txt: the short-circuit, kernel 0 and the bare write of M floats in one process, once per
  # mode, with the L2 flushed and warm. One CSV each (sc_<mode>_<flushed|warm>.csv), merged into shortcut.csv.
  : >"$OUT/scbench.log"
  for mode in ${SC_MODES:-tail graph poll sync}; do
    for fl in "" --no-flush; do
      tag=${fl:+warm}; tag=${tag:-flushed}
      stamp "scbench --shortcut-mode $mode $tag"
      (cd "$ROOT" && timeout 120 "$B/maxgemm_bench" --matrix bench/matrix_shortcut.txt --shortcut-mode $mode $fl \
        --csv "$OUT/sc_${mode}_${tag}.csv") >>"$OUT/scbench.log" 2>&1
      rc=$?
      say "scbench $mode $tag exit $rc: $( [ -s "$OUT/sc_${mode}_${tag}.csv" ] && awk -F, -f "$ROOT/tools/csvsel.awk" \
        -v cols=name,precision,shortcut,median_ms,x_kernel0 "$OUT/sc_${mode}_${tag}.csv" |
        awk '{ printf "%s %s sc%s %s ms x%s; ", $1, $2, $3, $4, $5 }')"
    done
  done
  (echo "run,$(head -1 "$(ls "$OUT"/sc_*.csv | head -1)")"; for f in "$OUT"/sc_*.csv; do
     t=$(basename "$f" .csv); tail -n +2 "$f" | sed "s/^/$t,/"; done) >"$OUT/shortcut.csv" 2>/dev/null
  rm -f "$OUT"/sc_*.csv
fi

if has bench && [ -x "$B/maxgemm_bench" ]; then
  stamp "bench: the matrix"
  (cd "$ROOT" && timeout ${BENCH_TIMEOUT:-560} "$B/maxgemm_bench" --matrix bench/matrix.txt --csv "$OUT/h200.csv" ${BENCH_ARGS:-}) >"$OUT/bench.log" 2>&1
  say "bench exit $? rows $(wc -l <"$OUT/h200.csv" 2>/dev/null)"
  tail -5 "$OUT/bench.log" | tee -a "$SUMMARY"
fi

if has ncu && command -v ncu >/dev/null; then
  # Through the Makefile's own target (make ncu), on the bundle's binaries (-o: take them as they are).
  for spec in ${NCU_KERNELS:-4:bf16 4:tf32 6:fp32}; do
    kid=${spec%%:*}; p=${spec##*:}
    stamp "make ncu KERNEL=$kid PREC=$p"
    (cd "$ROOT" && timeout 240 make -s -o bundle/bin/maxgemm -o bundle/bin/maxgemm_bench ncu KERNEL=$kid PREC=$p \
      BUILD=bundle/bin MG_GIT_COMMIT=gpu) >"$OUT/ncu_k${kid}_${p}.log" 2>&1
    say "ncu k$kid $p exit $?"
    cp "$ROOT"/notes/ncu/k${kid}_${p}.* "$OUT/" 2>/dev/null
    tail -1 "$OUT/k${kid}_${p}.csv" 2>/dev/null | cut -c1-400 | tee -a "$SUMMARY"
  done
fi

if has ncusc && command -v ncu >/dev/null; then
  # The short-circuit's classify kernel alone (its duration without launch or event overhead, and its memory
  # traffic), in the default mode, fp32 and bf16, with the CLI's L2 flush between calls and without.
  for p in fp32 bf16; do
    for fl in "" --no-flush; do
      tag=${fl:+warm}; tag=${tag:-flushed}
      stamp "ncu classify $p $tag"
      cc=all; [ -n "$fl" ] && cc=none   # warm: ncu must not flush the caches between passes either
      timeout 120 ncu --clock-control none --cache-control $cc -k regex:classify_kernel --launch-skip 3 --launch-count 3 --csv \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size \
        "$B/maxgemm" run --precision $p --iters 6 --warmup 0 $fl >"$OUT/ncu_classify_${p}_${tag}.csv" 2>&1
      say "ncu classify $p $tag exit $?"
      grep -E "gpu__time_duration|dram__bytes_read|lts__t_bytes" "$OUT/ncu_classify_${p}_${tag}.csv" | tail -3 | \
        awk -F'","' '{print "  " $(NF-2) " " $(NF-1) " " $NF}' | tee -a "$SUMMARY"
    done
  done
fi

if has santail; then
  # compute-sanitizer over the short-circuit's GPU tests (every mode, tail included, with rows left to compute, so
  # the device-launched graph runs), one Criterion test per tool; the tool library's sanitize step covers the rest.
  for tool in ${SANTAIL_TOOLS:-memcheck initcheck racecheck synccheck}; do
    stamp "compute-sanitizer $tool: gpu_shortcut/${SANTAIL_TEST:-plan_17x33x65}"
    timeout ${SANTAIL_TIMEOUT:-150} compute-sanitizer --tool $tool --target-processes all --error-exitcode 99 \
      "$B/test_maxgemm" --filter "gpu_shortcut/${SANTAIL_TEST:-plan_17x33x65}" --jobs 1 >"$OUT/santail_$tool.log" 2>&1
    say "santail $tool exit $?: $(grep -E "ERROR SUMMARY|Synthesis" "$OUT/santail_$tool.log" | tr '\n' ' ' | cut -c1-200)"
  done
fi

if has sanitize; then
  stamp "compute-sanitizer (tools/sanitize.sh): memcheck racecheck synccheck initcheck"
  mkdir -p "$OUT/sanitize-logs"
  LOGDIR=$OUT/sanitize-logs TIMEOUT=${SAN_TIMEOUT:-200} timeout ${SAN_TOTAL:-420} bash "$ROOT/tools/sanitize.sh" "$B" >"$OUT/sanitize.log" 2>&1
  say "sanitize exit $?"
  tail -4 "$OUT/sanitize.log" | tee -a "$SUMMARY"
  grep -v -E "clean|^ok" "$OUT/sanitize.log" | head -20 >>"$SUMMARY"
  (cd "$OUT" && tar czf sanitize-logs.tgz sanitize-logs && rm -rf sanitize-logs)
fi

if has python && [ -f "$ROOT/python/check_model.py" ]; then
  stamp "python: ModelNew vs Model"
  MAXGEMM_LIB=$B/libmaxgemm.so PYTHONUNBUFFERED=1 timeout 300 python3 "$ROOT/python/check_model.py" ${PY_ARGS:-} \
    --out-json "$OUT/pytorch.json" >"$OUT/pytorch.log" 2>&1
  say "python exit $?"
  tail -25 "$OUT/pytorch.log" | tee -a "$SUMMARY"
  for d in fp32 bf16; do
    MAXGEMM_LIB=$B/libmaxgemm.so timeout 120 python3 "$ROOT/python/host_profile.py" --dtype $d >>"$OUT/pytorch.log" 2>&1
    say "host_profile $d exit $?"
  done
  grep -A6 "^host time per call" "$OUT/pytorch.log" | tee -a "$SUMMARY"
fi

if has pipinstall; then
  # Issue 20's install check on the GPU host (no network there): a fresh venv that sees the host's torch, then
  # `pip install ./python` with the bundle's library (setuptools from the host: --no-build-isolation), then from
  # outside the source tree, without MAXGEMM_LIB: import, the bundled library's version, and one forward against
  # the reference Model.
  stamp "pip install ./python into a fresh venv, import from /tmp"
  V=$(mktemp -d /tmp/mg_venv.XXXXXX)
  # When the host's python3 is itself a venv, a nested venv does not inherit its packages: a .pth line to torch's
  # site-packages (as python/test_install.sh does).
  TS=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
  { python3 -m venv --system-site-packages "$V" &&
    { "$V/bin/python" -c 'import torch' 2>/dev/null ||
      echo "$TS" >"$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/host_torch.pth"; } &&
    MAXGEMM_LIB=$B/libmaxgemm.so "$V/bin/python" -m pip install --no-build-isolation --no-deps --no-index \
      --disable-pip-version-check "$ROOT/python" &&
    (cd /tmp && env -u MAXGEMM_LIB "$V/bin/python" -c '
import torch, maxgemm_torch as mt
from maxgemm_torch import _library
print("installed at", mt.__file__, "library", _library.library_path(), "version", mt.version())
torch.manual_seed(0)
for md in (0, 1):
    new = mt.ModelNew(512, 1024, md, shortcut=False).cuda()
    x = torch.randn(64, 512, device="cuda")
    y = new(x)
    r = torch.nn.functional.linear(x.double(), new.gemm.weight.double(), new.gemm.bias.double())
    r = torch.max(r, dim=md, keepdim=True).values
    r = torch.nn.functional.gelu(r - r.mean(dim=1, keepdim=True))
    torch.cuda.synchronize()
    err = (y.double() - r).abs().max().item()
    print(f"max_dim {md}: out {tuple(y.shape)} max|maxgemm - fp64 reference| {err:.3g}")
    assert tuple(y.shape) == tuple(r.shape) and err <= 1e-4, err
print("pip install check: PASS")
'); } >"$OUT/pipinstall.log" 2>&1
  say "pipinstall exit $?: $(tail -3 "$OUT/pipinstall.log" | tr '\n' ' ' | cut -c1-300)"
  rm -rf "$V"
fi

if has soak && [ -x "$B/maxgemm_soak" ]; then
  stamp "soak"
  timeout ${SOAK_TIMEOUT:-240} "$B/maxgemm_soak" ${SOAK_ARGS:-} >"$OUT/soak.log" 2>&1
  say "soak exit $?"; tail -6 "$OUT/soak.log" | tee -a "$SUMMARY"
fi
stamp "done"
