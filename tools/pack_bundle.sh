#!/usr/bin/env bash
# tools/pack_bundle.sh PLAN [SEED]: the packed bundle a prepared device run needs, from its plan script alone.
#
# A device run's plan (notes/runs/rNNN_plan.sh) names the binaries it calls, one comment line each:
#   # BIN NAME TARGET [DIFF]     TARGET: maxgemm, maxgemm_bench, test_maxgemm or probe_start; DIFF: an experiment's diff
#                                 (notes/runs/*.diff, patch -p1), built by tools/variant_build.sh
# This builds them all and packs bundle/pack.tar.xz (the only thing left under bundle/, so that it travels within the
# device tool's carry limit), holding bundle/bin (main's maxgemm, maxgemm_bench, test_maxgemm, libmaxgemm.so, soak,
# probe_l2, probe_start as `make bundle` puts them, then every BIN line's binary, stripped), bundle/lib (Criterion
# and the other non-system libraries), bundle/runNNN.sh (the plan) and bundle/plan_lib.sh (tools/plan_lib.sh: the
# steps plans share). The device command is then the one the plan's header gives:
#   tar xJf bundle/pack.tar.xz && bash bundle/runNNN.sh $OUT        (carry ["bundle"])
# SEED (default build/k11) is main's build directory: built first if it is not there (make all test_maxgemm, 7-8
# minutes on 2 cores), then every variant is built from it (tools/variant_build.sh SEED=..., 1-2 minutes each: only
# what its diff touches is recompiled). The checkout must be committed (the variants are built from HEAD).
# bundle/ and build/ are gitignored: a new checkout has neither, so a session that gets a device machine runs this
# first (in the background: it needs no GPU).
set -euo pipefail
if [ $# -lt 1 ]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
plan=$1
seed=${2:-build/k11}
root=$(git rev-parse --show-toplevel)
cd "$root"
[ -f "$plan" ] || { echo "pack_bundle: $plan: no such file" >&2; exit 2; }
run=$(basename "$plan" | sed -n 's/^\(r[0-9]*\)_plan\.sh$/\1/p')
[ -n "$run" ] || { echo "pack_bundle: $plan: not a notes/runs/rNNN_plan.sh" >&2; exit 2; }
script=bundle/run${run#r}.sh
if ! git diff --quiet HEAD -- Makefile src kernels bench tile_configs tools test; then
    echo "pack_bundle: commit first: the variants are built from HEAD and main's binaries from the working tree" >&2
    exit 2
fi

# the BIN lines; the variants: one build per distinct diff (with its test binary if any BIN line asks for one)
declare -A want_tests want_probe
lines=$(sed -n 's/^# BIN //p' "$plan")
[ -n "$lines" ] || echo "pack_bundle: $plan names no BIN lines: main's binaries only" >&2
while read -r name target diff; do
    [ -n "$name" ] || continue
    case $target in maxgemm|maxgemm_bench|test_maxgemm|probe_start) ;; *) echo "pack_bundle: BIN $name: unknown target $target" >&2; exit 2 ;; esac
    if [ -n "${diff:-}" ]; then
        [ -f "$diff" ] || { echo "pack_bundle: BIN $name: $diff: no such file" >&2; exit 2; }
        [ "$target" = test_maxgemm ] && want_tests[$diff]=1
        [ "$target" = probe_start ] && want_probe[$diff]=1
        : "${want_tests[$diff]:=}" "${want_probe[$diff]:=}"
    fi
done <<< "$lines"
# every diff must apply to HEAD (patch -p1, as tools/variant_build.sh applies it) before anything is built: a plan
# prepared sessions ago may have drifted
bad=0
for diff in "${!want_tests[@]}"; do
    patch -p1 --dry-run -s -f < "$diff" > /dev/null 2>&1 || { echo "pack_bundle: $diff does not apply to HEAD ($(git rev-parse --short HEAD)): rebase it first" >&2; bad=1; }
done
[ $bad -eq 0 ] || exit 1
# main's binaries, as `make bundle` lays them out
make -j"${JOBS:-$(nproc)}" BUILD="$seed" all "$seed/test_maxgemm" "$seed/probe_l2" "$seed/probe_start" > /tmp/pack_bundle_main.log 2>&1 || {
    tail -n 30 /tmp/pack_bundle_main.log >&2; echo "pack_bundle: main's build failed" >&2; exit 1; }

declare -A vdir
for diff in "${!want_tests[@]}"; do
    tag=$(basename "$diff" .diff)
    SEED=$seed TESTS=${want_tests[$diff]} PROBE=${want_probe[$diff]} JOBS=${JOBS:-$(nproc)} tools/variant_build.sh "$tag" "$diff" build/variants
    vdir[$diff]=build/variants/$tag
done
make BUILD="$seed" bundle > /dev/null   # only now: a failed build above leaves the last pack in place
while read -r name target diff; do
    [ -n "$name" ] || continue
    if [ -n "${diff:-}" ]; then src=${vdir[$diff]}/$target; else src=$seed/$target; fi
    cp "$src" "bundle/bin/$name"
done <<< "$lines"
strip --strip-debug bundle/bin/* 2> /dev/null || true
cp "$plan" "$script"
cp tools/plan_lib.sh bundle/plan_lib.sh   # the steps plans share (`. bundle/plan_lib.sh`)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mv bundle "$stage/bundle"
mkdir bundle
tar cf - -C "$stage" bundle | xz -T"${JOBS:-$(nproc)}" -6 > bundle/pack.tar.xz
size=$(stat -c %s bundle/pack.tar.xz)
echo "pack_bundle: bundle/pack.tar.xz ($((size / 1048576)) MiB): $(ls "$stage/bundle/bin" | tr '\n' ' ')"
echo "device command (carry [\"bundle\"]): tar xJf bundle/pack.tar.xz && bash $script \$OUT"
[ "$size" -lt $((60 * 1048576)) ] || { echo "pack_bundle: the pack is over 60 MiB (the carry limit is 64)" >&2; exit 1; }
