#!/usr/bin/env bash
# tune_run.sh: times the tile-shape variants that tools/tune.sh built, on the GPU host, in one go (< 4 minutes).
#
#   tools/tune_run.sh [BUNDLE_TUNE_DIR]        (default: bundle/tune)
#
# For every variant directory V (bundle/tune/V/{maxgemm,kernels,tiles.cfg}), in the order below:
#   - if it is in TAILS and its tiles use clusters (cluster 2): the cluster tail checks first, small shapes with --check that take
#     the paths the headline never does (M tail with a peer CTA that owns no row, W half past N, K = 0, K not a
#     multiple of BK / of 8): a hang or a FAIL there disqualifies the variant's headline numbers;
#   - the headline (M=1024 N=8192 K=8192) for each kernel in V/kernels: kernel 4 bf16 and tf32, kernel 6 fp32,
#     max_dim 0 and 1, --no-shortcut --check --iters 20.
# The baselines (kernel 0 bf16 / tf32 and kernel 5 fp32, both max_dims) come first, from the first variant's
# binary (they do not depend on the tiles). One line per run:
#   variant kernel precision md shape median_ms x_cuBLAS(kernel 0, same process) [x_k5] PASS|FAIL|HANG|ERROR
# x_k5 (kernel 6 lines) = the kernel 5 median of this script's baseline run / this median: the bar is 1.10.
# Every run has a time limit (RUN_LIMIT s, default 25): a deadlocked kernel becomes HANG and the rest of that
# variant is skipped. The whole script stops starting runs after BUDGET s (default 225).
# Every number comes from the row the run appends with --csv (columns by name, tools/csvsel.awk), never from the
# CLI's printed text; CSV=FILE keeps all those rows (with a first column naming the variant).
set -uo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-bundle/tune}
RUN_LIMIT=${RUN_LIMIT:-25}
BUDGET=${BUDGET:-225}
# c1 / c2 build kernel 6 with the register-split scheme (kBF16x3RS, the default); k6_presplit / k6_presplit_c2 are
# the same tiles with the first, pre-split scheme (-DMG_K6_PRESPLIT=1), right after them for a side-by-side read.
ORDER=${ORDER:-"c1 k6_presplit c2 k6_presplit_c2 k6_bk64_s2 k6_bk64_bn128_s3 c2_s3 k6_bk64_s2_c2 k6_bk64_bn128_s3_c2"}
# Variants that get the cluster tail checks (they need cluster 2 in their tiles). c2_s3 is left out by default:
# the same code as c2 with another ring depth, and the budget is tight.
TAILS=${TAILS:-"c2 k6_presplit_c2 k6_bk64_s2_c2 k6_bk64_bn128_s3_c2"}

variants=()
for v in $ORDER; do [ -x "$DIR/$v/maxgemm" ] && variants+=("$v"); done
for d in "$DIR"/*/; do
    v=$(basename "$d")
    [ -x "$DIR/$v/maxgemm" ] || continue
    case " ${variants[*]} " in *" $v "*) ;; *) variants+=("$v") ;; esac
done
[ ${#variants[@]} -gt 0 ] || { echo "tune_run.sh: no $DIR/<variant>/maxgemm (run tools/tune.sh first)" >&2; exit 2; }

declare -A k5_median
hung=""
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '%-22s %-2s %-5s %-2s %-16s %10s %9s %7s  %s\n' variant k prec md shape median_ms x_cuBLAS x_k5 result

# run VARIANT KERNEL PREC MD M N K ITERS
run() {
    local v=$1 k=$2 prec=$3 md=$4 m=$5 n=$6 kk=$7 iters=$8 out rc med xc res xk5="-"
    local shape="${m}x${n}x${kk}"
    if [ "$SECONDS" -ge "$BUDGET" ]; then
        printf '%-22s %-2s %-5s %-2s %-16s %10s %9s %7s  %s\n' "$v" "$k" "$prec" "$md" "$shape" - - - "SKIPPED (budget)"
        return
    fi
    if [ "$hung" = "$v" ]; then
        printf '%-22s %-2s %-5s %-2s %-16s %10s %9s %7s  %s\n' "$v" "$k" "$prec" "$md" "$shape" - - - "SKIPPED (variant hung)"
        return
    fi
    local csv=$TMP/run.csv pass=NaN mx=NaN
    rm -f "$csv"
    out=$(timeout -k 5 "$RUN_LIMIT" "$DIR/$v/maxgemm" run --kernel "$k" --precision "$prec" --max-dim "$md" \
          --m "$m" --n "$n" --k "$kk" --no-shortcut --check --iters "$iters" --csv "$csv" 2>&1)
    rc=$?
    med="" xc=""
    if [ -s "$csv" ]; then
        read -r med xc pass mx <<<"$(awk -F, -f tools/csvsel.awk -v first=1 -v cols=median_ms,x_kernel0,pass,max_err "$csv")"
        [ "$med" = NaN ] && med=""
        [ "$xc" = NaN ] && xc=""
        if [ -n "${CSV:-}" ]; then
            [ -s "$CSV" ] || sed -n '1s/^/variant,/p' "$csv" >"$CSV"
            tail -n +2 "$csv" | sed "s/^/$v,/" >>"$CSV"
        fi
    fi
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        res="HANG (killed after ${RUN_LIMIT} s)"
        hung=$v
    elif [ "$pass" = 1 ]; then
        res=PASS
    elif [ "$pass" = 0 ]; then
        res="FAIL: max abs err $mx (exit $rc)"
    else
        res="ERROR rc=$rc: $(printf '%s\n' "$out" | tail -n 2 | paste -sd ' ' -)"
    fi
    if [ "$k" = 5 ] && [ -n "$med" ]; then k5_median[$md]=$med; fi
    if [ "$k" = 6 ] && [ -n "$med" ] && [ -n "${k5_median[$md]:-}" ] && [ "$shape" = "1024x8192x8192" ]; then
        xk5=$(awk -v a="${k5_median[$md]}" -v b="$med" 'BEGIN { printf "%.3f", a / b }')
    fi
    printf '%-22s %-2s %-5s %-2s %-16s %10s %9s %7s  %s\n' "$v" "$k" "$prec" "$md" "$shape" "${med:--}" "${xc:--}" \
        "$xk5" "$res"
}

H="1024 8192 8192"
base=${variants[0]}
for md in 1 0; do
    run "$base" 0 bf16 $md $H 20
    run "$base" 0 tf32 $md $H 20
    run "$base" 5 fp32 $md $H 20
done

for v in "${variants[@]}"; do
    ks=$(cat "$DIR/$v/kernels" 2>/dev/null || echo "4 6")
    case " $TAILS " in *" $v "*) want_tails=1 ;; *) want_tails=0 ;; esac
    if [ $want_tails = 1 ] && grep -v '^[[:space:]]*#' "$DIR/$v/tiles.cfg" 2>/dev/null |
        awk 'NF >= 8 && $8 != 1 { f = 1 } END { exit !f }'; then
        # Cluster tails (small, 2 iterations): M = 127 (one M-tile: the peer CTA owns no row), M = 1100 (9 M-tiles,
        # the last unit's rank 1 is empty), N = 300 / 520 (the second W half of the last N-tile wholly or partly
        # past N), K = 72 / 200 (K tails; 200 % 8 = 0), K = 0 (no k-iterations), K = 5 (padded rows).
        for k in $ks; do
            if [ "$k" = 4 ]; then precs="bf16 tf32"; else precs="fp32"; fi
            for prec in $precs; do
                run "$v" "$k" "$prec" 0 127 300 72 2
                run "$v" "$k" "$prec" 1 127 300 72 2
                run "$v" "$k" "$prec" 0 1100 520 200 2
                run "$v" "$k" "$prec" 1 1100 520 200 2
                run "$v" "$k" "$prec" 1 300 1000 0 2
                run "$v" "$k" "$prec" 0 257 130 5 2
            done
        done
    fi
    for k in $ks; do
        if [ "$k" = 4 ]; then precs="bf16 tf32"; else precs="fp32"; fi
        for prec in $precs; do
            for md in 1 0; do run "$v" "$k" "$prec" $md $H 20; done
        done
    done
done
echo "tune_run.sh: ${SECONDS} s"
