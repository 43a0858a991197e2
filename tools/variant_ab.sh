#!/usr/bin/env bash
# tools/variant_ab.sh [TUNE_DIR]: same-process A/B of tune variants (tools/tune.sh builds TUNE_DIR/<variant>/maxgemm,
# default bundle/tune). Every run is one CLI call, timed against kernel 0 in that same process (its "x cuBLAS").
#   ITEMS="variant[:ENV=VAL[,ENV=VAL...]] ..."   what to compare, e.g. "k4_base k4_base:MG_PDL=0 k4_epi2"
#   SPECS="kernel:precision:max_dim:M ..."       the rows (N = K = 8192), default the headline's kernel 4 rows
#   ROUNDS=2                                     rounds; odd rounds run ITEMS in order, even ones reversed, so a
#                                                clock that drifts during the run favours no item
# Variants whose name contains "diag" or "noepi" compute wrong results on purpose (timing diagnostics): they run
# without --check and print "nocheck"; every other run is checked against the fp64 reference (PASS/FAIL).
# Output, one line per run: item spec median_ms k0_ms (kernel 0's median in that process) x_cuBLAS check
set -u
D=${1:-bundle/tune}
ITEMS=${ITEMS:-"k4_base"}
SPECS=${SPECS:-"4:bf16:1:1024 4:bf16:0:1024 4:tf32:1:1024 4:tf32:0:1024"}
ROUNDS=${ROUNDS:-2}
printf '%-34s %-18s %10s %10s %9s  %s\n' item spec median_ms k0_ms x_cuBLAS check
for spec in $SPECS; do
    IFS=: read -r k prec md m <<< "$spec"
    order=($ITEMS)
    for ((r = 1; r <= ROUNDS; r++)); do
        seq=("${order[@]}")
        if ((r % 2 == 0)); then
            seq=()
            for ((i = ${#order[@]} - 1; i >= 0; i--)); do seq+=("${order[i]}"); done
        fi
        for item in "${seq[@]}"; do
            v=${item%%:*}
            envs=()
            [ "$item" != "$v" ] && IFS=, read -r -a envs <<< "${item#*:}"
            chk=--check
            case $v in *diag* | *noepi*) chk= ;; esac
            if [ ! -x "$D/$v/maxgemm" ]; then
                printf '%-34s %-18s %10s %10s %9s  %s\n' "$item" "$spec" - - - "MISSING $D/$v/maxgemm"
                continue
            fi
            out=$(env "${envs[@]}" timeout -k 5 60 "$D/$v/maxgemm" run --kernel "$k" --precision "$prec" --max-dim "$md" \
                --m "$m" --n 8192 --k 8192 --no-shortcut $chk --iters 20 2>&1)
            rc=$?
            med=$(printf '%s\n' "$out" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -1)
            xc=$(printf '%s\n' "$out" | sed -n 's/.* \([0-9.]*\)x cuBLAS.*/\1/p' | head -1)
            k0=$(printf '%s\n' "$out" | sed -n 's/.*kernel 0 full compute: \([0-9.]*\) ms.*/\1/p' | head -1)
            if [ -z "$chk" ]; then res=nocheck
            elif printf '%s\n' "$out" | grep -q ': PASS$'; then res=PASS
            elif printf '%s\n' "$out" | grep -q ': FAIL$'; then res=FAIL
            else res="ERROR rc=$rc: $(printf '%s\n' "$out" | tail -n 2 | paste -sd ' ' -)"
            fi
            printf '%-34s %-18s %10s %10s %9s  %s\n' "$item" "$spec" "${med:--}" "${k0:--}" "${xc:--}" "$res"
        done
    done
done
