#!/usr/bin/env bash
# tune.sh: builds one maxgemm CLI per tile-shape variant, for tools/tune_run.sh to time on the GPU host.
#
#   tools/tune.sh [VARIANT ...]        (default: every directory under tune/)
#
# A variant is a directory tune/<variant>/ holding .cfg files (format: tile_configs/README.md) that REPLACE the
# files of the same name in tile_configs/ (the other families keep their shapes), plus a file `kernels` naming
# the registry kernels worth timing with it (e.g. "4 6"), and optionally a file `nvccflags` with extra nvcc flags
# for the variant (e.g. "-DMG_K6_PRESPLIT=1": kernel 6's first, pre-split scheme; they reach nvcc through the
# NVCCFLAGS environment variable, which the Makefile extends with its own flags). Each variant is built in its own build directory
# (make BUILD=build/tune/<variant> TILE_DIR=build/tune/<variant>/tiles), so the default build is never touched,
# and its CLI (statically linked with the library; cudart static, cuBLAS from the host) is copied, stripped, to
# bundle/tune/<variant>/maxgemm together with the tiles it was built from. bundle/tune must stay under ~40 MB.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then
    variants=("$@")
else
    variants=()
    for d in tune/*/; do [ -d "$d" ] && variants+=("$(basename "$d")"); done
fi
[ ${#variants[@]} -gt 0 ] || { echo "tune.sh: no variants (tune/<variant>/*.cfg)" >&2; exit 2; }

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p bundle/tune
for v in "${variants[@]}"; do
    src=tune/$v
    [ -d "$src" ] || { echo "tune.sh: $src: no such variant" >&2; exit 2; }
    ls "$src"/*.cfg > /dev/null 2>&1 || { echo "tune.sh: $src has no .cfg file" >&2; exit 2; }
    [ -s "$src/kernels" ] || { echo "tune.sh: $src/kernels (the kernels to time, e.g. '4 6') is missing" >&2; exit 2; }
    b=build/tune/$v
    tiles=$b/tiles
    mkdir -p "$tiles"
    # Rebuild the tile set from scratch: tile_configs/ first, then the variant's files on top. cp -p keeps the
    # sources' times, so an unchanged variant does not force a rebuild; a changed one is newer than the header.
    rm -f "$tiles"/*.cfg
    cp -p tile_configs/*.cfg "$tiles"/
    cp -p "$src"/*.cfg "$tiles"/
    echo "== $v: $(grep -h -v '^[[:space:]]*#' "$src"/*.cfg | grep -v '^[[:space:]]*$' | tr -s ' ' | paste -sd ';' -)"
    # The generated header depends on the set of .cfg files, not only their times: regenerate it every time.
    rm -f "$b/gen/mg_tiles.h" "$b/gen/mg_tiles.c"
    # Extra nvcc flags: objects built with other flags are stale (make cannot see a flag change), so start over.
    flags="-O3 -lineinfo"
    if [ -s "$src/nvccflags" ]; then flags="$flags $(grep -v '^[[:space:]]*#' "$src/nvccflags" | tr '\n' ' ')"; fi
    if [ "$(cat "$b/nvccflags.used" 2>/dev/null)" != "$flags" ]; then rm -rf "$b/obj"; fi
    [ "$flags" = "-O3 -lineinfo" ] || echo "   nvcc flags: $flags"
    if ! NVCCFLAGS="$flags" make -j"$JOBS" BUILD="$b" TILE_DIR="$tiles" "$b/maxgemm" > "$b.log" 2>&1; then
        tail -n 40 "$b.log"
        echo "tune.sh: $v: build FAILED (log: $b.log)" >&2
        exit 1
    fi
    # ptxas must stay clean: no spills, setmaxnreg honoured (C7508 means ptxas ignored it). The timeline
    # diagnostic (k4_timeline: per-tile timestamps kept in registers across the tile loop) may spill a few bytes
    # outside the k-loop; it is a timing probe, not a kernel to ship, so only an ignored setmaxnreg stops it.
    pat="[1-9][0-9]* bytes spill|C7508"
    case $v in *timeline*) pat="C7508" ;; esac
    for f in "$b"/obj/04_wgmma_ws.ptxas.txt "$b"/obj/06_wgmma_bf16x3.ptxas.txt; do
        if grep -E -q "$pat" "$f"; then
            grep -E "Compiling|spill|C7508" "$f"
            echo "tune.sh: $v: ptxas reports spills or an ignored setmaxnreg in $f" >&2
            exit 1
        fi
    done
    printf '%s' "$flags" > "$b/nvccflags.used"
    out=bundle/tune/$v
    rm -rf "$out" && mkdir -p "$out"
    cp "$b/maxgemm" "$out/maxgemm"
    strip --strip-debug "$out/maxgemm" 2>/dev/null || true # the fatbin is a data section: strip keeps it
    cp "$src/kernels" "$out/kernels"
    cat "$src"/*.cfg > "$out/tiles.cfg"
    if [ -s "$src/nvccflags" ]; then cp "$src/nvccflags" "$out/nvccflags"; fi
    echo "   -> $out/maxgemm ($(du -k "$out/maxgemm" | cut -f1) KiB)"
done
total_kb=$(du -sk bundle/tune | cut -f1)
echo "bundle/tune: ${total_kb} KiB"
if [ "$total_kb" -gt 40960 ]; then
    echo "tune.sh: bundle/tune is over 40 MB: build fewer variants (tools/tune.sh VARIANT ...)" >&2
    exit 1
fi
