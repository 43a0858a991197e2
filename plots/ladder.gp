# plots/ladder.gp: speed over cuBLAS (x_kernel0: kernel 0's median / the kernel's median, same run, same
# precision and max_dim) at the headline shape M=1024 N=K=8192, one bar pair (max_dim 1, max_dim 0) per kernel
# and precision -> plots/ladder.png. Whiskers: the spread of the row's own samples, kernel 0's median over the
# row's p90 and p10 (or over its max and min in CSVs without p10_ms / p90_ms, e.g. bench/results/h200.csv); the
# title says which. Auto rows are left out (they repeat a kernel's bar). Reads ONLY the benchmark CSV, through
# tools/csvsel.awk and plots/plotdata.awk.
if (!exists("csv")) csv = 'bench/results/h200.csv'
if (!exists("outdir")) outdir = 'plots'
gpu = system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v cols=gpu '%s'", csv))
spread = system(sprintf("awk -F, -f plots/plotdata.awk -v mode=spread '%s'", csv))
DATA = sprintf("< awk -F, -f plots/plotdata.awk -v mode=ladder '%s'", csv)
nbars = int(system(sprintf("awk -F, -f plots/plotdata.awk -v mode=ladder '%s' | wc -l", csv)))

set terminal pngcairo size 1400,1100 font ",11" noenhanced
set output outdir.'/ladder.png'
set datafile missing 'NaN'
set style data histograms
set style histogram errorbars gap 1 lw 1.2
set style fill solid 0.85 border -1
set boxwidth 0.9
set bars 0.6
set grid ytics lc rgb '#dddddd'
set lmargin 10
set rmargin 14
set xrange [-0.6:nbars - 0.4]   # the same in both panels
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#555555' front
set multiplot title sprintf("x cuBLAS at M=1024 N=8192 K=8192 (kernel 0 = cuBLAS in the same precision mode; %s)\nwhiskers: the row's sample spread, kernel 0's median / the row's %s; the lower panel zooms on 0.8 .. 1.2", gpu, spread eq 'p10/p90' ? 'p90 .. p10' : 'max .. min')
# columns: 1 label, 2-4 max_dim 1 (x, lo, hi), 5-7 max_dim 0; the value printed over the whisker's top
set origin 0, 0.45
set size 1, 0.50
set ylabel 'x kernel 0 (higher is faster)'
set yrange [0:*]
set xtics format '' scale 0
set key top left
plot DATA using 2:3:4 lc rgb '#1f77b4' title 'max_dim 1', \
     ''   using 5:6:7 lc rgb '#ff7f0e' title 'max_dim 0', \
     ''   using ($0 - 0.17):4:(sprintf('%.2f', $2)) with labels offset 0,0.7 font ",8" notitle, \
     ''   using ($0 + 0.17):7:(sprintf('%.2f', $5)) with labels offset 0,0.7 font ",8" notitle
set origin 0, 0
set size 1, 0.47
set ylabel 'x kernel 0, zoomed'
set yrange [0.8:1.2]
set ytics 0.05
set xtics rotate by -35 scale 0 format '% h'
unset key
plot DATA using 2:3:4:xtic(1) lc rgb '#1f77b4' title 'max_dim 1', \
     ''   using 5:6:7 lc rgb '#ff7f0e' title 'max_dim 0', \
     ''   using ($0 - 0.17):($4 < 1.2 ? $4 : NaN):(sprintf('%.3f', $2)) with labels offset 0,0.7 font ",7" notitle, \
     ''   using ($0 + 0.17):($7 < 1.2 ? $7 : NaN):(sprintf('%.3f', $5)) with labels offset 0,0.7 font ",7" notitle
unset multiplot
