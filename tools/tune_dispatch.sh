#!/usr/bin/env bash
# tune_dispatch.sh: the GPU half of the dispatch-table tune (notes/dispatch.md), `make tune-dispatch`.
#
#   tools/tune_dispatch.sh BIN_DIR OUT_DIR [dispatch_tune.py matrix options: --n N --k K --m LIST --variants ...]
#
# BIN_DIR holds maxgemm and maxgemm_bench (build/, or bundle/bin on a GPU host without the dev packages). Writes into
# OUT_DIR: registry.csv (`maxgemm list --csv`), matrix.txt (tools/dispatch_tune.py matrix: every candidate kernel x
# option variant per precision, max_dim and M), tune.csv (maxgemm_bench --matrix matrix.txt: every row paired with
# kernel 0, progress on stderr), and, where python3 is present, OUT_DIR/<gpu>.tsv (tools/dispatch_tune.py pick).
# The pick runs as well on a machine without a GPU from tune.csv: `make dispatch-pick TUNE_CSV=OUT_DIR/tune.csv`
# writes tile_configs/dispatch/<gpu>.tsv, the file to commit. Exit status: maxgemm_bench's (0 every row passed its
# check), or 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
bin=$1 out=$2
shift 2
for b in maxgemm maxgemm_bench; do
    [ -x "$bin/$b" ] || { echo "tune_dispatch: $bin/$b not found (make, or make bundle)" >&2; exit 2; }
done
command -v python3 > /dev/null || { echo "tune_dispatch: python3 is needed to write the matrix" >&2; exit 2; }
mkdir -p "$out"
"$bin/maxgemm" list --csv "$out/registry.csv"
python3 tools/dispatch_tune.py matrix --registry "$out/registry.csv" "$@" -o "$out/matrix.txt"
rc=0
"$bin/maxgemm_bench" --matrix "$out/matrix.txt" --csv "$out/tune.csv" || rc=$?
# rows that failed their check or errored are not candidates (the pick reads status and pass): pick anyway
if [ -s "$out/tune.csv" ]; then
    python3 tools/dispatch_tune.py pick "$out/tune.csv" --registry "$out/registry.csv" --out-dir "$out" || rc=1
    echo "tune_dispatch: $out/tune.csv: the table to commit comes from 'make dispatch-pick TUNE_CSV=$out/tune.csv'" \
         "(writes tile_configs/dispatch/)"
fi
exit "$rc"
