#!/usr/bin/env bash
# tools/sanitize.sh: compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every built kernel x every
# precision it claims x both max_dims x two small odd shapes (127x257x129, 200x300x264), full compute
# (--no-shortcut), plus the max_dim 1 short-circuit path once per tool. See notes/reliability.md.
#
#   tools/sanitize.sh [BINDIR]          BINDIR holds maxgemm: build/ (default) or bundle/bin
#
# Environment (all optional):
#   TOOLS            tools to run                       (default "memcheck racecheck synccheck initcheck")
#   KERNELS          registry ids to cover               (default: every built kernel whose min_sm the GPU meets)
#   JOBS             sanitizer processes at once         (default half the CPUs, 1..8; each is small, the GPU has room)
#   TIMEOUT          seconds per run                     (default 300)
#   LOGDIR           one log per run                     (default BINDIR/sanitize-logs)
#   LEAK_CHECK       1: memcheck also runs --leak-check full (device allocations alive at exit are errors) (default 1)
#   SANITIZER        the compute-sanitizer binary        (default: PATH, then $CUDA_HOME/bin, /usr/local/cuda/bin)
#   SANITIZER_FLAGS  extra flags for every run
#   SHAPES           "M N K;M N K..." instead of the two odd shapes (default "127 257 129;200 300 264")
# Prints one line per run and a final count. Exit: 0 every run clean, 1 any error, 77 skipped (no CUDA device or
# no compute-sanitizer), 2 bad usage.
set -u
BIN=${1:-build}
BIN=${BIN%/}
MG=$BIN/maxgemm
if [ ! -x "$MG" ]; then
  echo "sanitize: $MG not found or not executable (build it with make, or pass the bundle's bin/)" >&2
  exit 2
fi
# A bundle tree keeps its non-system libraries beside bin/ (make bundle); the caller supplies cuBLAS's directory.
[ -d "$BIN/../lib" ] && export LD_LIBRARY_PATH="$(cd "$BIN/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
TOOLS=${TOOLS:-memcheck racecheck synccheck initcheck}
NCPU=$(nproc 2>/dev/null || echo 2)
JOBS=${JOBS:-$((NCPU / 2 < 1 ? 1 : (NCPU / 2 > 8 ? 8 : NCPU / 2)))}
TIMEOUT=${TIMEOUT:-300}
LEAK_CHECK=${LEAK_CHECK:-1}
SANITIZER_FLAGS=${SANITIZER_FLAGS:-}
LOGDIR=${LOGDIR:-$BIN/sanitize-logs}

SAN=${SANITIZER:-$(command -v compute-sanitizer 2>/dev/null || true)}
for c in "${CUDA_HOME:-}/bin/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer; do
  [ -z "$SAN" ] && [ -x "$c" ] && SAN=$c
done
if [ -z "$SAN" ] || [ ! -x "$SAN" ]; then
  echo "sanitize: SKIPPED: compute-sanitizer not found (set SANITIZER=/path/to/compute-sanitizer)"
  exit 77
fi

# The registry as CSV (maxgemm list --csv -), read by column name: this GPU's sm (0: none) and, per kernel,
# 'id precisions min_sm built' (precisions ';'-separated, built 1 or 0).
SEL=$(cd "$(dirname "$0")" && pwd)/csvsel.awk
if ! LIST=$("$MG" list --csv - 2>&1); then
  echo "sanitize: $MG list --csv - failed: $(printf '%s\n' "$LIST" | tail -1)" >&2
  exit 2
fi
SM=$(printf '%s\n' "$LIST" | awk -F, -f "$SEL" -v first=1 -v cols=gpu_sm)
case $SM in '' | 0 | NaN | *[!0-9]*)
  echo "sanitize: SKIPPED: no CUDA device ($MG list --csv: gpu_sm ${SM:-missing})"
  exit 77 ;;
esac
ROWS=$(printf '%s\n' "$LIST" | awk -F, -f "$SEL" -v cols=id,precisions,min_sm,built)
SPECS=()     # one run each: "tool|label|maxgemm run arguments"
# SHAPES (environment): "M N K;M N K;..." in place of the two odd shapes, e.g. SHAPES='127 256 129;200 384 264'
# (N a multiple of 128: no consumer of kernel 8 skips its slab; notes/18_small_m.md "Session 12")
if [ -n "${SHAPES:-}" ]; then IFS=';' read -r -a SHAPES <<<"$SHAPES"; else SHAPES=("127 257 129" "200 300 264"); fi
for tool in $TOOLS; do
  while read -r kid precs minsm built; do
    [ -z "$kid" ] && continue
    if [ -n "${KERNELS:-}" ] && ! printf ' %s ' "$KERNELS" | tr ',' ' ' | grep -q " $kid "; then continue; fi
    if [ "$built" != 1 ]; then
      [ "$tool" = "${TOOLS%% *}" ] && echo "sanitize: kernel $kid is not built: not covered"
      continue
    fi
    if [ "$minsm" -gt "$SM" ]; then
      [ "$tool" = "${TOOLS%% *}" ] && echo "sanitize: kernel $kid needs sm_$minsm, this GPU is sm_$SM: not covered"
      continue
    fi
    for p in $(echo "$precs" | tr ';' ' '); do
      for shape in "${SHAPES[@]}"; do
        read -r m n k <<<"$shape"
        for md in 1 0; do
          SPECS+=("$tool|k$kid $p ${m}x${n}x${k} md$md|--kernel $kid --precision $p --m $m --n $n --k $k --max-dim $md --no-shortcut --iters 1 --warmup 0 --no-flush")
        done
      done
    done
  done <<<"$ROWS"
  # The short-circuit (certificate) path: max_dim 1 without --no-shortcut, the auto kernel.
  SPECS+=("$tool|auto fp32 127x257x129 md1 short-circuit|--kernel auto --precision fp32 --m 127 --n 257 --k 129 --max-dim 1 --iters 1 --warmup 0 --no-flush")
done

TOTAL=${#SPECS[@]}
mkdir -p "$LOGDIR"
rm -f "$LOGDIR"/run_*.log "$LOGDIR"/run_*.rc
echo "sanitize: $TOTAL runs ($TOOLS) with $SAN, $JOBS at a time, sm_$SM; logs in $LOGDIR"

# One run: the sanitizer's exit code says whether it found errors (--error-exitcode 99); any other non-zero code is
# the application failing (e.g. a kernel declining the shape) or the timeout (124): all count as errors.
run_one() {
  local idx=$1 spec=$2
  local tool=${spec%%|*} rest=${spec#*|}
  local label=${rest%%|*} args=${rest#*|}
  local tag
  tag=$(printf 'run_%03d_%s_%s' "$idx" "$tool" "$label" | tr ' /' '__')
  local log=$LOGDIR/$tag.log
  local extra=""
  [ "$tool" = memcheck ] && [ "$LEAK_CHECK" = 1 ] && extra="--leak-check full"
  local t0=$SECONDS
  # shellcheck disable=SC2086  # args, extra and SANITIZER_FLAGS are word lists on purpose
  timeout "$TIMEOUT" "$SAN" --tool "$tool" --error-exitcode 99 $extra $SANITIZER_FLAGS "$MG" run $args >"$log" 2>&1
  local rc=$?
  local nerr
  nerr=$(grep -o 'ERROR SUMMARY: [0-9]*' "$log" | tail -1 | awk '{print $3}')
  # racecheck ends with its own line instead: "RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)"
  [ -z "$nerr" ] && nerr=$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors' "$log" | tail -1 |
    sed -E 's/.*\(([0-9]+) errors/\1/')
  [ -z "$nerr" ] && nerr="?"
  local what
  case $rc in
    0) what="clean" ;;
    99) what="SANITIZER ERRORS" ;;
    124 | 137) what="TIMEOUT after ${TIMEOUT}s" ;;
    *) what="FAILED (maxgemm exit $rc: $(grep -m1 -E '^maxgemm:' "$log" | cut -c1-160))" ;;
  esac
  echo "$rc $nerr" >"$LOGDIR/$tag.rc"
  printf '[%3d/%d] %-10s %-38s %-18s errors %-3s %4ds%s\n' "$idx" "$TOTAL" "$tool" "$label" "$what" "$nerr" \
    $((SECONDS - t0)) "$([ $rc -ne 0 ] && echo "  log: $log")"
}

running=0
idx=0
for spec in "${SPECS[@]}"; do
  idx=$((idx + 1))
  run_one "$idx" "$spec" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

runs=0
bad=0
reported=0
for f in "$LOGDIR"/run_*.rc; do
  [ -e "$f" ] || continue
  read -r rc nerr <"$f"
  runs=$((runs + 1))
  [ "$rc" != 0 ] && bad=$((bad + 1))
  case $nerr in '' | *[!0-9]*) ;; *) reported=$((reported + nerr)) ;; esac
done
missing=$((TOTAL - runs))
echo "sanitize: $runs of $TOTAL runs finished, $bad with errors, $reported errors reported by compute-sanitizer$([ $missing -gt 0 ] && echo ", $missing runs left no result")"
if [ "$bad" -eq 0 ] && [ "$missing" -eq 0 ] && [ "$runs" -gt 0 ]; then
  echo "sanitize: PASS"
  exit 0
fi
echo "sanitize: FAIL"
exit 1
