#!/usr/bin/env python3
"""tools/sass_kloop_diff.py: compare the wgmma k-loops of two builds of a kernel file, function by function.

Kernel 8's consumer k-loop is sensitive to code elsewhere in the kernel (notes/18_small_m.md, runs 88 and 94: -8 to
-15% from changes outside the loop), so a change near it is first checked here: the SASS from the first to the last
HGMMA of each function (plus 40 instructions either side), registers and immediates normalised, A against B.

  cuobjdump -sass A.o > a.sass; cuobjdump -sass B.o > b.sass
  tools/sass_kloop_diff.py a.sass b.sass [NAME_SUBSTRING]     (default substring: swapab_kernel)

Prints one line per function: its instruction counts in A and B, the k-loop region's length in each, the R2UR count
of the producer's TMA loop in each (from 60 instructions before the first UTMALDG to 20 after the last of its run,
UTMALDGs less than 300 instructions apart: 0 = the loop runs on the uniform datapath; run 98's slowdowns of up to
13% came with this count going from 0 to 13-71 while the k-loop stayed the same, notes/18_small_m.md "Session 17")
and "same" or the number of differing k-loop lines. Exit 0 when every k-loop region and producer count is the same,
1 otherwise."""
import difflib
import re
import sys


def functions(path):
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r'\s*Function : (\S+)', line)
            if m:
                cur = m.group(1)
                out[cur] = []
                continue
            m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line)
            if cur and m:
                out[cur].append(m.group(2))
    return out


GAP = 300   # UTMALDGs further apart than this many instructions belong to different code (producer_r2ur)


def norm(ins):
    ins = re.sub(r'0x[0-9a-f]+', 'X', ins)
    return re.sub(r'\b(U?R|P|UP)\d+\b', r'\1', ins)


def kloop(code):
    idx = [i for i, t in enumerate(code) if 'HGMMA' in t]
    return code[max(0, idx[0] - 40):idx[-1] + 40] if idx else []


def producer_r2ur(code):
    idx = [i for i, t in enumerate(code) if 'UTMALDG' in t]
    if not idx:
        return 0
    # the first run of UTMALDGs (the producer's loop, inlined in the kernel's body); a noinline callee's own TMA issue
    # sits in the function's listing hundreds of instructions further on and is not counted with it
    last = idx[0]
    for i in idx[1:]:
        if i - last > GAP:
            break
        last = i
    return sum('R2UR' in t for t in code[max(0, idx[0] - 60):last + 20])


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    a, b = functions(sys.argv[1]), functions(sys.argv[2])
    sub = sys.argv[3] if len(sys.argv) > 3 else 'swapab_kernel'
    differ = 0
    for name in sorted(set(a) | set(b)):
        if sub not in name:
            continue
        x, y = [norm(i) for i in a.get(name, [])], [norm(i) for i in b.get(name, [])]
        lx, ly = kloop(x), kloop(y)
        px, py = producer_r2ur(x), producer_r2ur(y)
        nd = sum(1 for d in difflib.unified_diff(lx, ly, n=0, lineterm='')
                 if d[:1] in '+-' and d[:3] not in ('+++', '---'))
        bad = nd > 0 or px != py
        differ += bad
        what = name[:100] if nd == 0 else '%s (%d lines)' % (name[:90], nd)
        print('%-8s A %5d B %5d  k-loop A %4d B %4d  producer R2UR A %2d B %2d  %s' %
              ('same' if not bad else 'DIFF', len(x), len(y), len(lx), len(ly), px, py, what))
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())
