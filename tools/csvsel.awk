# csvsel.awk: select rows and columns of the benchmark CSV by column NAME, for gnuplot (`plot '< awk ...'`) and
# tools/readme_table.sh. POSIX awk (mawk and gawk). The CSV has no quoted fields (bench.c never writes any).
#
#   awk -F, -f tools/csvsel.awk -v where='status=ok,m=1024,kernel!=-1' -v cols='intensity,tflops,name' FILE
#       prints the chosen columns of matching rows, space-separated; an empty field prints as NaN, spaces in a
#       field become '_' (so gnuplot sees one word per column)
#   ... -v first=1          only the first matching row (NaN if none): for one value, e.g. a ceiling
#   ... -v uniq=1           each distinct combination of cols once, in order of first appearance
#   ... -v pivot=max_dim -v pivotvals=1,0 -v val=x_kernel0
#                           one line per distinct combination of cols, then val for each pivot value (NaN if absent)
# where: comma-separated NAME=VALUE or NAME!=VALUE, all must hold (string comparison, exact).
BEGIN { nw = 0; nc = 0; nk = 0; np = 0 }
NR == 1 {
    for (i = 1; i <= NF; i++) col[$i] = i
    if (where != "") {
        nw = split(where, w, ",")
        for (j = 1; j <= nw; j++) {
            neq[j] = index(w[j], "!=") > 0
            if (neq[j]) { p = index(w[j], "!="); wn[j] = substr(w[j], 1, p - 1); wv[j] = substr(w[j], p + 2) }
            else { p = index(w[j], "="); wn[j] = substr(w[j], 1, p - 1); wv[j] = substr(w[j], p + 1) }
            if (!(wn[j] in col)) { print "csvsel.awk: no column '" wn[j] "' in " FILENAME > "/dev/stderr"; bad = 1; exit 2 }
        }
    }
    nc = split(cols, c, ",")
    for (j = 1; j <= nc; j++)
        if (!(c[j] in col)) { print "csvsel.awk: no column '" c[j] "' in " FILENAME > "/dev/stderr"; bad = 1; exit 2 }
    if (pivot != "") {
        if (!(pivot in col) || !(val in col)) { print "csvsel.awk: no column '" pivot "' or '" val "'" > "/dev/stderr"; bad = 1; exit 2 }
        np = split(pivotvals, pv, ",")
    }
    next
}
function cell(name,   v) { v = $(col[name]); gsub(/ /, "_", v); return v == "" ? "NaN" : v }
{
    for (j = 1; j <= nw; j++) {
        v = $(col[wn[j]])
        if (neq[j] ? (v == wv[j]) : (v != wv[j])) next
    }
    line = ""
    for (j = 1; j <= nc; j++) line = line (j > 1 ? " " : "") cell(c[j])
    if (pivot != "") {
        if (!(line in seen)) { seen[line] = 1; keys[++nk] = line }
        table[line SUBSEP $(col[pivot])] = cell(val)
        next
    }
    if (uniq) { if (line in seen) next; seen[line] = 1 }
    print line
    found = 1
    if (first) exit 0
}
END {
    if (bad) exit 2
    if (first && !found) print "NaN"
    for (i = 1; i <= nk; i++) {
        out = keys[i]
        for (j = 1; j <= np; j++) out = out " " ((keys[i] SUBSEP pv[j]) in table ? table[keys[i] SUBSEP pv[j]] : "NaN")
        print out
    }
}
