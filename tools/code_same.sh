#!/usr/bin/env bash
# tools/code_same.sh [REV] [kernels/FILE.cu ...]: is the device code of the working tree's kernels the same as REV's?
#
# For a refactor of kernel code on a machine without a GPU (and without cuobjdump: the CPU machines' CUDA has nvcc
# and ptxas only). Each file is compiled to a cubin twice, from REV's kernels/ and src/ (git archive) and from the
# working tree's, with the Makefile's NVCCFLAGS less -lineinfo (line numbers move with any edit), and the two cubins'
# sections are compared byte for byte: the .text.* sections (the SASS of every kernel), .nv.constant*, .nv.info* and
# the rest; not the symbol and string tables, and the anonymous namespace's per-compile hash and counter are taken
# out of the section names. "same" for a file means ptxas emitted the same instructions for every kernel in it, so
# what the GPU tests and the benchmark measured on REV holds for the working tree. Default REV: HEAD; default files:
# every kernels/*.cu (~4 minutes on 2 cores; one file ~5-60 s). Needs BUILD's generated headers (make once;
# BUILD=build by default, as the Makefile). Exit status: 0 every file the same, 1 some differ, 2 usage or build.
#   tools/code_same.sh HEAD kernels/04_wgmma_ws.cu kernels/08_wgmma_swapab.cu
set -euo pipefail
rev=${1:-HEAD}
[ $# -gt 0 ] && shift
root=$(git rev-parse --show-toplevel)
cd "$root"
BUILD=${BUILD:-build}
if [ ! -f "$BUILD/gen/mg_tiles.h" ]; then
    echo "code_same: $BUILD/gen/mg_tiles.h missing: run make (BUILD=$BUILD) first" >&2
    exit 2
fi
git rev-parse --verify -q "$rev^{commit}" > /dev/null || { echo "code_same: $rev: no such commit" >&2; exit 2; }
files=("$@")
[ ${#files[@]} -gt 0 ] || mapfile -t files < <(ls kernels/*.cu)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base" "$tmp/a" "$tmp/b"
git archive "$rev" kernels src | tar -x -C "$tmp/base"
# shellcheck disable=SC2016  # $(NVCCFLAGS) is make's, expanded by make
# the Makefile's own NVCCFLAGS (BUILD absolute: REV's tree is compiled from elsewhere), less -lineinfo
read -ra flags <<< "$(make -s --no-print-directory --eval 'code-same-flags: ; @echo $(NVCCFLAGS)' code-same-flags \
    BUILD="$(cd "$BUILD" && pwd)")"
for i in "${!flags[@]}"; do [ "${flags[$i]}" != -lineinfo ] || unset 'flags[i]'; done
[ ${#flags[@]} -gt 0 ] || { echo "code_same: make printed no NVCCFLAGS" >&2; exit 2; }
build() {   # build TREE OUTDIR FILE
    local out
    out=$2/$(basename "$3" .cu)
    if ! (cd "$1" && nvcc "${flags[@]}" -cubin -o "$out.cubin" "$3") 2> "$out.log"; then
        echo "code_same: $3 does not compile in $1:" >&2
        cat "$out.log" >&2
        return 1
    fi
}
for f in "${files[@]}"; do
    [ -f "$tmp/base/$f" ] || { echo "code_same: $f is not in $rev" >&2; exit 2; }
    build "$tmp/base" "$tmp/a" "$f" & build "$root" "$tmp/b" "$f" &
    wait -n && wait -n || exit 2
done
python3 - "$tmp/a" "$tmp/b" <<'PY'
import os, re, struct, sys
def sections(path):
    d = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3A)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize) for i in range(shnum)]
    stro = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        name = d[stro + h[0]:d.index(b'\0', stro + h[0])].decode()
        name = re.sub(r'_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]{8}(_\d+)?', 'ANON', name)
        if name in ('.symtab', '.strtab', '.shstrtab'):
            continue
        out[name] = d[h[4]:h[4] + h[5]] if h[1] != 8 else b'\0' * h[5]   # SHT_NOBITS: its size only
    return out
a, b = sys.argv[1], sys.argv[2]
bad = 0
for f in sorted(x for x in os.listdir(a) if x.endswith('.cubin')):
    sa, sb = sections(os.path.join(a, f)), sections(os.path.join(b, f))
    text = [n for n in sa if n.startswith('.text.')]
    diff = sorted(n for n in set(sa) | set(sb) if sa.get(n) != sb.get(n))
    if diff:
        bad += 1
        ntext = sum(1 for n in diff if n.startswith('.text.'))
        print(f'{f[:-6]}: DIFFERS in {len(diff)} sections ({ntext} of {len(text)} kernels\' code)')
        for n in diff[:8]:
            print('   ', n[:150])
    else:
        print(f'{f[:-6]}: same ({len(text)} kernels, {len(sa)} sections)')
sys.exit(1 if bad else 0)
PY
