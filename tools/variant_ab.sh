#!/usr/bin/env bash
# tools/variant_ab.sh [TUNE_DIR]: same-process A/B of tune variants (tools/tune.sh builds TUNE_DIR/<variant>/maxgemm,
# default bundle/tune). Every run is one CLI call, timed against kernel 0 in that same process (its "x cuBLAS"), and
# read back from the row it appends with --csv (columns by name, tools/csvsel.awk), never from its printed text.
#   ITEMS="variant[:FLAG[,FLAG...]] ..."   what to compare: a variant and the `maxgemm run` flags it gets (comma-
#                                          separated, each one word: --no-pdl, --tiles=mid, --shortcut-mode=poll),
#                                          e.g. "k4_base k4_base:--no-pdl k4_base:--tiles=mid,--no-streamk k4_epi2"
#   SPECS="kernel:precision:max_dim:M ..." the rows (N = K = 8192), default the headline's kernel 4 rows
#   ROUNDS=2                               rounds; odd rounds run ITEMS in order, even ones reversed, so a
#                                          clock that drifts during the run favours no item
#   CSV=FILE                               also keep every run's row there (default: a temporary file)
# Variants whose name contains "diag" or "noepi" compute wrong results on purpose (timing diagnostics): they run
# without --check and print "nocheck"; every other run is checked against the fp64 reference (PASS/FAIL).
# Output, one line per run: item spec median_ms k0_ms (kernel 0's median in that process) x_cuBLAS check
set -u
D=${1:-bundle/tune}
ITEMS=${ITEMS:-"k4_base"}
SPECS=${SPECS:-"4:bf16:1:1024 4:bf16:0:1024 4:tf32:1:1024 4:tf32:0:1024"}
ROUNDS=${ROUNDS:-2}
SEL=$(cd "$(dirname "$0")" && pwd)/csvsel.awk
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
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
            flags=()
            [ "$item" != "$v" ] && IFS=, read -r -a flags <<< "${item#*:}"
            chk=--check
            case $v in *diag* | *noepi*) chk= ;; esac
            if [ ! -x "$D/$v/maxgemm" ]; then
                printf '%-34s %-18s %10s %10s %9s  %s\n' "$item" "$spec" - - - "MISSING $D/$v/maxgemm"
                continue
            fi
            csv=$TMP/run.csv
            rm -f "$csv"
            out=$(timeout -k 5 60 "$D/$v/maxgemm" run --kernel "$k" --precision "$prec" --max-dim "$md" \
                --m "$m" --n 8192 --k 8192 --no-shortcut $chk --iters 20 --csv "$csv" "${flags[@]}" 2>&1)
            rc=$?
            med=- k0=- xc=- pass=NaN
            if [ -s "$csv" ]; then
                read -r med k0 xc pass <<< "$(awk -F, -f "$SEL" -v first=1 -v cols=median_ms,kernel0_ms,x_kernel0,pass "$csv")"
                if [ -n "${CSV:-}" ]; then
                    [ -s "$CSV" ] || head -1 "$csv" > "$CSV"
                    tail -n +2 "$csv" >> "$CSV"
                fi
            fi
            if [ ! -s "$csv" ]; then res="ERROR rc=$rc: $(printf '%s\n' "$out" | tail -n 2 | paste -sd ' ' -)"
            elif [ -z "$chk" ]; then res=nocheck
            elif [ "$pass" = 1 ]; then res=PASS
            elif [ "$pass" = 0 ]; then res=FAIL
            else res="ERROR rc=$rc: no check in the CSV row"
            fi
            printf '%-34s %-18s %10s %10s %9s  %s\n' "$item" "$spec" "$med" "$k0" "$xc" "$res"
        done
    done
done
