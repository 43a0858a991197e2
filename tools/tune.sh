#!/usr/bin/env bash
# tune.sh: builds one maxgemm CLI per tile-shape variant, for tools/tune_run.sh to time on the GPU host.
#
#   tools/tune.sh [VARIANT ...]        (VARIANT: a name or tune/<name>.overlay; default: every tune/*.overlay)
#
# A variant is an overlay, tune/<variant>.overlay (format: tools/tune_overlay.sh): only the tile_configs rows it
# changes, each replacing the row of the same (kernel, precision) in a copy of tile_configs/, a `kernels:` line
# naming the registry kernels worth timing with it (e.g. "kernels: 4 6"), and optionally a `nvccflags:` line with
# extra nvcc flags for the variant (they reach nvcc through the NVCCFLAGS environment variable, which the Makefile
# extends with its own flags). tools/tune_overlay.sh validates the overlay and writes the merged tile set; each
# variant is built in its own build directory (make BUILD=build/tune/<variant> TILE_DIR=build/tune/<variant>/tiles),
# so the default build is never touched, and its CLI (statically linked with the library; cudart static, cuBLAS
# from the host) is copied, stripped, to bundle/tune/<variant>/maxgemm together with the kernels list, the merged
# tiles it was built from (tiles.cfg) and the overlay. bundle/tune must stay under ~40 MB.
set -euo pipefail
cd "$(dirname "$0")/.."

variants=()
if [ $# -gt 0 ]; then
    for a in "$@"; do a=${a##*/}; variants+=("${a%.overlay}"); done
else
    for f in tune/*.overlay; do [ -e "$f" ] && variants+=("$(basename "$f" .overlay)"); done
fi
[ ${#variants[@]} -gt 0 ] || { echo "tune.sh: no variants (tune/<variant>.overlay)" >&2; exit 2; }

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p bundle/tune
for v in "${variants[@]}"; do
    src=tune/$v.overlay
    [ -f "$src" ] || { echo "tune.sh: $src: no such variant" >&2; exit 2; }
    tools/tune_overlay.sh --check "$src" > /dev/null || { echo "tune.sh: $src is not a valid overlay" >&2; exit 2; }
    kernels=$(tools/tune_overlay.sh --get kernels "$src")
    b=build/tune/$v
    tiles=$b/tiles
    # The tile set: tile_configs/ with the overlay's rows in place (a merged file whose text did not change keeps
    # its time, so an unchanged variant does not force a rebuild; a changed one is newer than the header).
    tools/tune_overlay.sh "$src" "$tiles"
    echo "== $v: $(grep -h -v '^[[:space:]]*#' "$src" | sed 's/#.*//' | grep -v '^[[:space:]]*$' | tr -s ' \t' ' ' |
        paste -sd ';' -)"
    # The generated header depends on the set of .cfg files, not only their times: regenerate it every time.
    rm -f "$b/gen/mg_tiles.h" "$b/gen/mg_tiles.c"
    # Extra nvcc flags: objects built with other flags are stale (make cannot see a flag change), so start over.
    flags="-O3 -lineinfo"
    extra=$(tools/tune_overlay.sh --get nvccflags "$src")
    if [ -n "$extra" ]; then flags="$flags $extra"; fi
    if [ "$(cat "$b/nvccflags.used" 2>/dev/null)" != "$flags" ]; then rm -rf "$b/obj"; fi
    [ "$flags" = "-O3 -lineinfo" ] || echo "   nvcc flags: $flags"
    if ! NVCCFLAGS="$flags" make -j"$JOBS" BUILD="$b" TILE_DIR="$tiles" "$b/maxgemm" > "$b.log" 2>&1; then
        tail -n 40 "$b.log"
        echo "tune.sh: $v: build FAILED (log: $b.log)" >&2
        exit 1
    fi
    # ptxas must stay clean: no spills, setmaxnreg honoured (C7508 means ptxas ignored it).
    pat="[1-9][0-9]* bytes spill|C7508"
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
    echo "$kernels" > "$out/kernels"
    cat "$tiles"/*.cfg > "$out/tiles.cfg"
    cp "$src" "$out/overlay"
    if [ -n "$extra" ]; then echo "$extra" > "$out/nvccflags"; fi
    echo "   -> $out/maxgemm ($(du -k "$out/maxgemm" | cut -f1) KiB)"
done
total_kb=$(du -sk bundle/tune | cut -f1)
echo "bundle/tune: ${total_kb} KiB"
if [ "$total_kb" -gt 40960 ]; then
    echo "tune.sh: bundle/tune is over 40 MB: build fewer variants (tools/tune.sh VARIANT ...)" >&2
    exit 1
fi
