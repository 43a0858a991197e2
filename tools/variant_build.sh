#!/usr/bin/env bash
# tools/variant_build.sh NAME DIFF [OUTDIR]: the benchmark and the CLI of an experiment, for a same-run A/B.
#
# Builds maxgemm_bench and maxgemm from this checkout's HEAD with DIFF applied (patch -p1 from the repository root,
# as the diffs under notes/runs/ are written) in a scratch git worktree, and copies them to OUTDIR/NAME (default
# build/variants/NAME). The main build stays as it is, so a device call can alternate the two binaries over one
# matrix: tools/ab_main.sh OUT build/maxgemm_bench build/variants/NAME/maxgemm_bench (A V V A; MATRIX= a smaller
# matrix, e.g. bench/matrix_ticket.txt), then tools/ab_compare.py (notes/18_small_m.md: kernel 8's speed moves with
# code around its k-loop, so every change is measured that way). Compare the variant's kernel 8 SASS with
# tools/sass_kloop_diff.py before spending device time.
#
# The whole library is rebuilt (7-8 minutes on 2 cores: the CUDA objects dominate) unless SEED=DIR names a build of
# this same HEAD inside the checkout (e.g. SEED=build/k11 after `make BUILD=build/k11 all build/k11/test_maxgemm`):
# then its objects are copied into the scratch tree as up to date, and make rebuilds only what the diff touches (a
# kernel object follows its nvcc -MMD dependencies: a kernel-8 diff rebuilds kernel 8 and relinks, ~1-2 minutes; the
# objects that embed the commit, cli.o and bench.o, are rebuilt by the Makefile's commit stamp: the variant's
# MG_GIT_COMMIT is HEAD+NAME). JOBS=N sets make's -j.
# TESTS=1 builds and copies the Criterion binary too (OUTDIR/NAME/test_maxgemm), to run the variant's GPU suites in
# the same device call as its A/B (with the bundle's lib/ on LD_LIBRARY_PATH, as make bundle's test_maxgemm).
# PROBE=1 builds and copies tools/probe_start too (OUTDIR/NAME/probe_start: kernel 8's finish code, which its
# tma3d_fin8 variant runs, as the diff leaves it).
#   tools/variant_build.sh G notes/runs/r122_plan_gelu_f32.diff
#   -> build/variants/G/maxgemm_bench, build/variants/G/maxgemm, build/variants/G/obj (the objects, for cuobjdump)
set -euo pipefail
if [ $# -lt 2 ]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
name=$1
diff=$(realpath "$2")
root=$(git rev-parse --show-toplevel)
out=$(realpath -m "${3:-$root/build/variants}")/$name
[ -f "$diff" ] || { echo "variant_build: $2: no such file" >&2; exit 2; }

scratch=$(mktemp -d)
cleanup() { git -C "$root" worktree remove --force "$scratch/tree" 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT
git -C "$root" worktree add --detach -q "$scratch/tree" HEAD
bdir=build/variant
if [ -n "${SEED:-}" ]; then
    # the seed's objects, newer than the scratch tree's checked-out sources; then the patch, newer than both
    seed=$(realpath "$SEED")
    case "$seed/" in "$root"/*) bdir=${seed#"$root"/} ;; *) echo "variant_build: SEED=$SEED is not inside $root" >&2; exit 2 ;; esac
    if ! git -C "$root" diff --quiet HEAD -- Makefile src kernels bench tile_configs tools test; then
        echo "variant_build: SEED=$SEED: the checkout has uncommitted changes to what the build reads; the seed must be a build of HEAD (commit, or build without SEED)" >&2
        exit 2
    fi
    [ -f "$seed/libmaxgemm.a" ] || { echo "variant_build: SEED=$SEED holds no build (no libmaxgemm.a)" >&2; exit 2; }
    mkdir -p "$scratch/tree/$(dirname "$bdir")"
    cp -a "$seed" "$scratch/tree/$bdir"
    find "$scratch/tree/$bdir" -type f -exec touch {} +
    sleep 1
fi
(cd "$scratch/tree" && patch -p1 -s --no-backup-if-mismatch < "$diff") || {
    echo "variant_build: $2 does not apply to HEAD ($(git -C "$root" rev-parse --short HEAD))" >&2
    exit 1
}
make -C "$scratch/tree" -j"${JOBS:-$(nproc)}" BUILD="$bdir" \
    MG_GIT_COMMIT="$(git -C "$root" rev-parse --short=12 HEAD)+$name" \
    "$bdir/maxgemm_bench" "$bdir/maxgemm" ${TESTS:+"$bdir/test_maxgemm"} ${PROBE:+"$bdir/probe_start"} \
    > "$scratch/build.log" 2>&1 || {
    tail -n 40 "$scratch/build.log" >&2
    echo "variant_build: the build of $name failed" >&2
    exit 1
}
if grep -hq "Registers are spilled" "$scratch/tree/$bdir/obj/"*.ptxas.txt 2>/dev/null; then
    echo "variant_build: warning: ptxas reports spills in $name:" >&2
    grep -h "Registers are spilled" "$scratch/tree/$bdir/obj/"*.ptxas.txt | sort -u | head -5 >&2
fi
rm -rf "$out"
mkdir -p "$out/obj"
cp "$scratch/tree/$bdir/maxgemm_bench" "$scratch/tree/$bdir/maxgemm" "$out/"
[ -z "${TESTS:-}" ] || cp "$scratch/tree/$bdir/test_maxgemm" "$out/"
[ -z "${PROBE:-}" ] || cp "$scratch/tree/$bdir/probe_start" "$out/"
cp "$scratch/tree/$bdir/obj/"*.cu.o "$out/obj/"
echo "variant_build: $out/maxgemm_bench, $out/maxgemm ($(basename "$diff") on $(git -C "$root" rev-parse --short HEAD))"
