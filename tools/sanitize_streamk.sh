#!/usr/bin/env bash
# tools/sanitize_streamk.sh BINDIR: compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the stream-K
# path of kernels 4 and 6 (shapes whose tiles are split across CTAs: the slots, the flags, the spin-wait).
# tools/sanitize.sh's shapes are too small to take that path. LOGDIR=dir keeps each run's full output there (the
# hazard reports); MG_WS_SMALL=0/1 in the environment forces kernel 4's tile configuration (the shapes below take
# the small-M one by default). Reading racecheck's kernel 4 bf16 result: the CLI also runs kernel 0 (cuBLAS) for its
# ratio, and racecheck reports 512 shared-memory hazards inside cuBLAS's nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT
# (r16, r18), none in ws_kernel; excluding nvjet (--kernel-name-exclude kns=nvjet, r19) made the sanitizer fail on
# a hardware exception in the cuBLAS run instead, after both ws_kernel launches had finished clean. Check the log.
set -u
B=${1:?usage: tools/sanitize_streamk.sh BINDIR}
rc=0
for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
  for spec in "4 bf16 2 8192 4096" "6 fp32 2 8192 4096" "4 tf32 300 1000 4100"; do
    set -- $spec
    out=$(MG_VERBOSE=1 timeout ${TIMEOUT:-120} compute-sanitizer --tool $tool --error-exitcode 99 "$B/maxgemm" run \
      --kernel $1 --precision $2 --m $3 --n $4 --k $5 --max-dim 1 --no-shortcut --check --iters 1 --warmup 0 --no-flush 2>&1)
    r=$?
    [ $r -ne 0 ] && rc=1
    [ -n "${LOGDIR:-}" ] && mkdir -p "$LOGDIR" && echo "$out" >"$LOGDIR/${tool}_k$1_$2_$3x$4x$5_small${MG_WS_SMALL:-auto}.log"
    printf '%-10s k%s %s %sx%sx%s rc=%d  %s | %s\n' "$tool" "$1" "$2" "$3" "$4" "$5" "$r" \
      "$(echo "$out" | grep -oE 'stream-K tiles [0-9]+' | head -1)" "$(echo "$out" | grep -E 'SUMMARY|PASS|FAIL' | tr '\n' ' ' | cut -c1-160)"
  done
done
exit $rc
