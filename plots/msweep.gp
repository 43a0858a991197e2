# plots/msweep.gp: TFLOP/s against M (N = K = 8192, max_dim 1, full compute) for every kernel and precision
# -> plots/msweep.png. Reads ONLY the benchmark CSV through tools/csvsel.awk. Small M is memory-bound: the
# dotted lines are the memory roofs: reading x and W once at the measured copy bandwidth (fp32 and bf16 bytes);
# line colour is the kernel, point shape the precision (circle bf16, square tf32, triangle fp32).
if (!exists("csv")) csv = 'bench/results/h200.csv'
if (!exists("outdir")) outdir = 'plots'
gpu = system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v cols=gpu '%s'", csv))
# auto rows (requested_kernel = auto, newer CSVs only) repeat a kernel's point: left out (plots/xcublas_m.gp has them)
hasreq = int(system(sprintf("head -1 '%s' | tr ',' '\\n' | grep -cx requested_kernel", csv)))
W = 'status=ok,n=8192,k=8192,max_dim=1,shortcut=0,kernel!=-1'.(hasreq ? ',requested_kernel!=auto' : '')
combos = system(sprintf("awk -F, -f tools/csvsel.awk -v uniq=1 -v where='%s' -v cols='kernel,precision' '%s' | tr ' ' ':' | tr '\\n' ' '", W, csv))
# (concatenated, not sprintf: gnuplot 5.4's sprintf truncates a long result whose format holds '%%')
names  = system("awk -F, -f tools/csvsel.awk -v uniq=1 -v where='".W."' -v cols='kernel,name,precision' '".csv."' | awk '{printf \"k%s_%s_%s \", $1, $2, $3}'")
bw = real(system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v where='name=ceiling_copy,status=ok' -v cols=gbps '%s'", csv))) / 1000.0
kern(c) = c[1:strstrt(c, ':') - 1]
prec(c) = c[strstrt(c, ':') + 1:]
# bytes at N = K = 8192: x (M K) + W (N K) + b (N) + out (M), element size e; TFLOP/s = 2MNK / (bytes / bw)
floor_tf(m, e) = (bw == bw && bw > 0) ? 2.0 * m * 8192 * 8192 / ((m * 8192.0 + 8192.0 * 8192 + 8192 + m) * e / (bw * 1e12)) / 1e12 : NaN

set terminal pngcairo size 1400,900 font ",11" noenhanced
set output outdir.'/msweep.png'
set datafile missing 'NaN'
set logscale xy
set xrange [0.8:20000]
set xlabel 'M (batch), N = K = 8192'
set ylabel 'TFLOP/s'
set title sprintf('TFLOP/s across batch sizes, max_dim 1, full compute (%s)', gpu)
set grid xtics ytics lc rgb '#dddddd'
set key outside right top
set xtics (1, 8, 64, 256, 1024, 4096, 16384)
set yrange [0.5:2000]
set samples 200
plot for [i = 1:words(combos)] \
       sprintf("< awk -F, -f tools/csvsel.awk -v where='%s,kernel=%s,precision=%s' -v cols='m,tflops' '%s' | sort -g -k1,1", W, kern(word(combos, i)), prec(word(combos, i)), csv) \
       using 1:2 with linespoints lw 2 lc (int(kern(word(combos, i))) + 1) pt (prec(word(combos, i)) eq 'bf16' ? 7 : prec(word(combos, i)) eq 'tf32' ? 5 : 9) \
       title word(names, i), \
     floor_tf(x, 4) lc rgb '#888888' dt 3 title 'memory roof: x, W read once at the copy rate (fp32)', \
     floor_tf(x, 2) lc rgb '#444444' dt 3 title 'memory roof (bf16)'
