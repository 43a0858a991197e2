#!/bin/sh
# tools/ptxas_report.sh [OBJDIR]: one Markdown table per object from the ptxas -v logs the Makefile keeps
# (OBJDIR/*.ptxas.txt, default build/obj): kernel (demangled, template arguments shortened), registers, shared
# memory, stack frame, spill stores/loads. `make ptxas-report` writes it into notes/ptxas.md between the lines
# <!-- ptxas:begin --> and <!-- ptxas:end -->.
set -eu
dir=${1:-build/obj}
for f in "$dir"/*.ptxas.txt; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .ptxas.txt)
    awk -v obj="$name" '
        /Compiling entry function/ { fn = $0; sub(/.*function \x27/, "", fn); sub(/\x27.*/, "", fn); order[++n] = fn }
        /bytes stack frame/ && fn != "" { split($0, a, /[ ,]+/); stack[fn] = a[2]; sst[fn] = a[6]; sld[fn] = a[10] }
        /Used [0-9]+ registers/ && fn != "" {
            r = $0; sub(/.*Used /, "", r); sub(/ registers.*/, "", r); regs[fn] = r
            s = "0"; if ($0 ~ /bytes smem/) { s = $0; sub(/ bytes smem.*/, "", s); sub(/.*, /, "", s) }; smem[fn] = s }
        END {
            if (n == 0) exit
            printf "\n**%s**\n\n| kernel | registers | static smem B | stack B | spill st/ld B |\n|---|---:|---:|---:|---|\n", obj
            for (i = 1; i <= n; i++) { fn = order[i]; printf "%s\t%s\t%s\t%s\t%s/%s\n", fn, regs[fn], smem[fn], stack[fn], sst[fn], sld[fn] }
        }' "$f" | while IFS="$(printf '\t')" read -r fn regs smem stack spill; do
        case "$fn" in
            _Z*) d=$(printf '%s\n' "$fn" | c++filt | sed -E -e 's/\(anonymous namespace\):://g' -e 's/\(([A-Za-z_][A-Za-z_0-9:]*)\)([0-9-])/\2/g' -e 's/\(.*//' | cut -c1-110)
                 printf '| `%s` | %s | %s | %s | %s |\n' "$d" "$regs" "$smem" "$stack" "$spill" ;;
            *) printf '%s\n' "$fn" ;;
        esac
    done
done
