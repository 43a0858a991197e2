#!/usr/bin/env bash
# tools/sanitize_streamk.sh BINDIR: compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the stream-K
# path of kernels 4 and 6 (shapes whose tiles are split across CTAs: the slots, the flags, the spin-wait) and on
# kernel 4's mixed-width column panels (1000 x 8190 x 72: 33 panels, the n248 wgmma, a ragged last panel).
# tools/sanitize.sh's shapes are too small to take those paths. LOGDIR=dir keeps each run's full output there (the
# hazard reports, and the launch plans: every run has --verbose); TILES=main|mid|small|n192 passes --tiles to force
# kernel 4's tile configuration (the stream-K shapes below take the small-M one by default); FLAGS="..." adds other
# `maxgemm run` flags (e.g. "--mixed-panels force"). Each line shows the launch plan the run made, read from the
# 'plan' column of the row it appends with --csv. The CLI runs with --no-baseline: kernel 0 (cuBLAS) is not run,
# so the sanitizer sees only our kernels (runs 16-19 without it: racecheck reported 512 hazards inside cuBLAS's
# nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT, none in ws_kernel, and excluding nvjet by name crashed the sanitizer).
set -u
# SPECS: one "kernel precision M N K [max_dim]" per line (default below).
DEFAULT_SPECS="4 bf16 2 8192 4096
6 fp32 2 8192 4096
4 tf32 300 1000 4100
4 bf16 1000 8190 72"
B=${1:?usage: tools/sanitize_streamk.sh BINDIR}
SEL=$(cd "$(dirname "$0")" && pwd)/csvsel.awk
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
tiles=()
[ -n "${TILES:-}" ] && tiles=(--tiles "$TILES")
rc=0
for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
  while read -r spec; do
    [ -z "$spec" ] && continue
    set -- $spec
    csv=$TMP/run.csv
    rm -f "$csv"
    # shellcheck disable=SC2086  # FLAGS is a word list on purpose
    out=$(timeout ${TIMEOUT:-120} compute-sanitizer --tool $tool --error-exitcode 99 "$B/maxgemm" run \
      --kernel $1 --precision $2 --m $3 --n $4 --k $5 --max-dim ${6:-1} --no-shortcut --check --iters 1 --warmup 0 \
      --no-flush --no-baseline --verbose --csv "$csv" "${tiles[@]}" ${FLAGS:-} 2>&1)
    r=$?
    [ $r -ne 0 ] && rc=1
    [ -n "${LOGDIR:-}" ] && mkdir -p "$LOGDIR" && echo "$out" >"$LOGDIR/${tool}_k$1_$2_$3x$4x$5_md${6:-1}_tiles${TILES:-auto}.log"
    plan=-
    check=-
    if [ -s "$csv" ]; then
      plan=$(awk -F, -f "$SEL" -v first=1 -v cols=plan "$csv")
      check=$(awk -F, -f "$SEL" -v first=1 -v cols=pass "$csv" | sed 's/^1$/PASS/; s/^0$/FAIL/')
    fi
    printf '%-10s k%s %s %sx%sx%s md%s rc=%d  %s | %s | %s\n' "$tool" "$1" "$2" "$3" "$4" "$5" "${6:-1}" "$r" "$check" \
      "$(echo "$out" | grep -E 'ERROR SUMMARY' | tail -1)" "$(echo "$plan" | cut -c1-160)"
  done <<<"${SPECS:-$DEFAULT_SPECS}"
done
exit $rc
