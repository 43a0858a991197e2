#!/usr/bin/env bash
# tools/tune_overlay.sh: tools/tune.sh's tile-shape variants as overlays on tile_configs/.
#
#   tools/tune_overlay.sh [--base DIR] OVERLAY OUTDIR
#       writes the merged tile set into OUTDIR: every DIR/*.cfg (default tile_configs/), with each row of OVERLAY
#       replacing the row of the same (kernel, precision); comments and the other rows are kept. A file whose merged
#       text is unchanged keeps its time stamp (make sees no change); OUTDIR/*.cfg that DIR lacks are removed.
#   tools/tune_overlay.sh [--base DIR] [--gen GEN_TILES] --check [OVERLAY ...]
#       validates every OVERLAY (default: every tune/*.overlay), each against DIR; with --gen (build/gen_tiles),
#       also runs the build's own parser over each merged set. Exit 0 only if all are valid.
#   tools/tune_overlay.sh --get kernels|nvccflags OVERLAY
#       prints that directive's value (nothing if the overlay has none).
#
# Overlay format (tune/<variant>.overlay, one variant per file):
#   - rows in the tile_configs syntax (tile_configs/README.md): `kernel precision bm bn bk stages consumers cluster`,
#     each replacing the base row of the same (kernel, precision). A row that matches no base row is an error (a
#     stale variant: the row it changed is gone or renamed, or the name is misspelt); so is a pair given twice.
#   - `kernels: N [N ...]`: the registry kernels tools/tune_run.sh / tools/variant_ab.sh time with it (required).
#   - `nvccflags: FLAGS`: extra nvcc flags for this variant's build (optional).
#   - `#` starts a comment (whole-line or trailing), blank lines are ignored, CRLF is accepted; the first line is by
#     convention a one-line comment saying what the variant tests and where its result is in notes/.
#   An overlay with no rows is the base tile set itself (a reference build).
# Values are checked as src/tile_config.c checks them (fields, names, ranges), so --check fails where the build would.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "$PWD" = "$ROOT" ]; then BASE=tile_configs; else BASE=$ROOT/tile_configs; fi
GEN=""
MODE=merge
GETKEY=""
usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --base) [ $# -ge 2 ] || usage; BASE=$2; shift 2 ;;
    --gen) [ $# -ge 2 ] || usage; GEN=$2; shift 2 ;;
    --check) MODE=check; shift ;;
    --get) [ $# -ge 2 ] || usage; MODE="get"; GETKEY=$2; shift 2 ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) echo "tune_overlay.sh: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done

# The whole parser and merger: overlays first (ARGV[1..nov]), then the base files.
# mode: merge (one overlay; output files under `out`), check, get (one overlay, no base, prints VAL[getkey]).
read -r -d '' AWK_PROG <<'EOF' || true
BEGIN {
    split("kernel precision bm bn bk stages consumers cluster", NAME, " ")
    MIN[3] = 8; MAX[3] = 512; MIN[4] = 8; MAX[4] = 512; MIN[5] = 8; MAX[5] = 256
    MIN[6] = 1; MAX[6] = 16; MIN[7] = 1; MAX[7] = 16; MIN[8] = 1; MAX[8] = 4
    nerr = 0; nrows = 0
    for (i = 1; i <= nov; i++) ISOV[ARGV[i]] = 1
}
function err(where, msg) { printf "%s: %s\n", where, msg > "/dev/stderr"; nerr++ }
function warn(where, msg) { printf "%s: warning: %s\n", where, msg > "/dev/stderr" }
function trim(s) { sub(/^[ \t\r\v\f]+/, "", s); sub(/[ \t\r\v\f]+$/, "", s); return s }
function base_name(p) { sub(/.*\//, "", p); return p }
# The text before any '#', trimmed; "\001" (never valid) when it holds a byte outside printable ASCII.
function body(line, where,    i, s) {
    i = index(line, "#")
    s = i ? substr(line, 1, i - 1) : line
    if (s ~ /[^ -~\t\r\v\f]/) {
        err(where, "a byte outside printable ASCII before any '#' (only printable ASCII is allowed outside comments)")
        return "\001"
    }
    return trim(s)
}
# Splits s into T[1..n] and checks it as one tile_configs row; returns 1 if valid.
function row_ok(s, where,    n, f, v) {
    n = split(s, T, /[ \t\r\v\f]+/)
    if (n != 8) {
        err(where, (n > 8 ? "too many fields" : "expected 8 fields") \
            " (kernel precision bm bn bk stages consumers cluster), found " n)
        return 0
    }
    if (T[1] !~ /^[a-z0-9_]+$/ || length(T[1]) > 31) {
        err(where, "kernel name '" T[1] "' must be [a-z0-9_]+, at most 31 characters")
        return 0
    }
    if (T[2] != "fp32" && T[2] != "tf32" && T[2] != "bf16") {
        err(where, "precision '" T[2] "' is not one of fp32, tf32, bf16")
        return 0
    }
    for (f = 3; f <= 8; f++) {
        if (T[f] !~ /^[0-9]+$/) { err(where, NAME[f] " '" T[f] "' is not a positive decimal integer"); return 0 }
        v = T[f] + 0
        if (v < MIN[f] || v > MAX[f]) {
            err(where, NAME[f] " '" T[f] "' is out of range [" MIN[f] ", " MAX[f] "]")
            return 0
        }
    }
    return 1
}
function fields(    f, s) { s = T[3] + 0; for (f = 4; f <= 8; f++) s = s " " (T[f] + 0); return s }
# ---- overlays ----
FILENAME in ISOV {
    where = FILENAME ":" FNR
    s = body($0, where)
    if (s == "" || s == "\001") next
    if (s ~ /^[A-Za-z_][A-Za-z0-9_]*:/) {
        key = s; sub(/:.*/, "", key)
        val = s; sub(/^[^:]*:/, "", val); val = trim(val)
        if (key != "kernels" && key != "nvccflags") { err(where, "unknown directive '" key ":' (kernels:, nvccflags:)"); next }
        if ((FILENAME, key) in VAL) { err(where, "'" key ":' given twice"); next }
        if (val == "") { err(where, "'" key ":' has no value"); next }
        if (key == "kernels" && val !~ /^[0-9]+([ \t]+[0-9]+)*$/) {
            err(where, "kernels: '" val "' is not a list of registry kernel numbers (e.g. 'kernels: 4 6')"); next
        }
        VAL[FILENAME, key] = val
        next
    }
    if (!row_ok(s, where)) next
    k = T[1] " " T[2]
    if ((FILENAME, k) in OVROW) { err(where, "duplicate row for '" k "' (first at line " OVLINE[FILENAME, k] ")"); next }
    OVROW[FILENAME, k] = T[1] "  " T[2] "  " fields()
    OVFIELDS[FILENAME, k] = fields()
    OVLINE[FILENAME, k] = FNR
    nrows++; RFILE[nrows] = FILENAME; RKEY[nrows] = k; RWHERE[nrows] = where
    NROWS[FILENAME]++
    next
}
# ---- base files (tile_configs/*.cfg) ----
{
    where = FILENAME ":" FNR
    outfile = out "/" base_name(FILENAME)
    line = $0
    s = body($0, where)
    if (s != "" && s != "\001" && row_ok(s, where)) {
        k = T[1] " " T[2]
        if (k in BASEAT) err(where, "duplicate row for '" k "' (also at " BASEAT[k] ")")
        else { BASEAT[k] = where; BASEFIELDS[k] = fields() }
        if (mode == "merge" && (ovfile, k) in OVROW) {
            line = OVROW[ovfile, k] "  # tune overlay " ovname " (" ovfile ":" OVLINE[ovfile, k] "); " \
                   base_name(FILENAME) " had " fields()
        }
    }
    if (mode == "merge") print line > outfile
}
END {
    for (i = 1; i <= nrows; i++) {
        k = RKEY[i]
        if (mode == "get") continue
        if (!(k in BASEAT)) err(RWHERE[i], "row '" k "' matches no row of " base " (an overlay can only replace rows)")
        else if (OVFIELDS[RFILE[i], k] == BASEFIELDS[k])
            warn(RWHERE[i], "row '" k "' is the same as " BASEAT[k] " (no change)")
    }
    for (i = 1; i <= nov; i++) {
        f = ARGV[i]
        if (!((f, "kernels") in VAL)) err(f, "no 'kernels:' line (the kernels to time with this variant, e.g. 'kernels: 4 6')")
        if (mode == "check" && nerr == 0)
            printf "tune_overlay: %s: %d row(s), kernels %s%s\n", f, NROWS[f] + 0, VAL[f, "kernels"], \
                ((f, "nvccflags") in VAL) ? ", nvccflags " VAL[f, "nvccflags"] : ""
    }
    if (mode == "get" && nerr == 0 && (ARGV[1], getkey) in VAL) print VAL[ARGV[1], getkey]
    exit (nerr > 0)
}
EOF

base_files() {
    [ -d "$BASE" ] || { echo "tune_overlay.sh: $BASE: no such directory" >&2; exit 2; }
    shopt -s nullglob
    BASE_FILES=("$BASE"/*.cfg)
    shopt -u nullglob
}

case $MODE in
get)
    [ $# -eq 1 ] || usage
    case $GETKEY in kernels | nvccflags) ;; *) echo "tune_overlay.sh: --get kernels|nvccflags" >&2; exit 2 ;; esac
    [ -r "$1" ] || { echo "tune_overlay.sh: $1: cannot read" >&2; exit 2; }
    LC_ALL=C awk -v mode=get -v nov=1 -v getkey="$GETKEY" -v out=/dev/null -v base="$BASE" "$AWK_PROG" "$1"
    ;;
merge)
    [ $# -eq 2 ] || usage
    ov=$1 outdir=$2
    [ -r "$ov" ] || { echo "tune_overlay.sh: $ov: cannot read" >&2; exit 2; }
    base_files
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/tune_overlay.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    for f in "${BASE_FILES[@]}"; do : > "$tmp/$(basename "$f")"; done
    name=$(basename "$ov"); name=${name%.overlay}
    LC_ALL=C awk -v mode=merge -v nov=1 -v out="$tmp" -v ovfile="$ov" -v ovname="$name" -v base="$BASE" \
        "$AWK_PROG" "$ov" "${BASE_FILES[@]}" || { echo "tune_overlay.sh: $ov: not applied" >&2; exit 1; }
    mkdir -p "$outdir"
    # Replace only what changed (time stamps: make rebuilds only from a changed tile set); drop stale files.
    for f in "$tmp"/*.cfg; do
        [ -e "$f" ] || continue
        d=$outdir/$(basename "$f")
        cmp -s "$f" "$d" 2>/dev/null || cp "$f" "$d"
    done
    for d in "$outdir"/*.cfg; do
        [ -e "$d" ] || continue
        [ -e "$tmp/$(basename "$d")" ] || rm -f "$d"
    done
    ;;
check)
    if [ $# -eq 0 ]; then
        shopt -s nullglob
        set -- "$ROOT"/tune/*.overlay
        shopt -u nullglob
        [ $# -gt 0 ] || { echo "tune_overlay.sh: no tune/*.overlay under $ROOT" >&2; exit 1; }
        if [ "$PWD" = "$ROOT" ]; then set -- "${@#"$ROOT"/}"; fi
    fi
    for ov in "$@"; do [ -r "$ov" ] || { echo "tune_overlay.sh: $ov: cannot read" >&2; exit 1; }; done
    base_files
    rc=0
    LC_ALL=C awk -v mode=check -v nov=$# -v out=/dev/null -v base="$BASE" "$AWK_PROG" "$@" "${BASE_FILES[@]}" || rc=1
    if [ $rc -eq 0 ] && [ -n "$GEN" ]; then
        [ -x "$GEN" ] || { echo "tune_overlay.sh: --gen $GEN: not an executable" >&2; exit 2; }
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/tune_overlay.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
        for ov in "$@"; do
            rm -rf "$tmp/tiles" "$tmp/o.h" "$tmp/o.c"
            "$0" --base "$BASE" "$ov" "$tmp/tiles" || { rc=1; continue; }
            if ! "$GEN" "$tmp/o.h" "$tmp/o.c" "$tmp"/tiles/*.cfg; then
                echo "tune_overlay.sh: $ov: the merged tile set does not pass $GEN" >&2
                rc=1
            fi
        done
    fi
    if [ $rc -eq 0 ]; then echo "tune_overlay: $# overlay(s) valid against $BASE"; fi
    exit $rc
    ;;
esac
