# plots/ladder.gp: speed over cuBLAS (x_kernel0: kernel 0's median / the kernel's median, same run, same
# precision and max_dim) at the headline shape M=1024 N=K=8192, one bar pair (max_dim 1, max_dim 0) per kernel
# and precision -> plots/ladder.png. Reads ONLY the benchmark CSV through tools/csvsel.awk.
if (!exists("csv")) csv = 'bench/results/h200.csv'
if (!exists("outdir")) outdir = 'plots'
gpu = system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v cols=gpu '%s'", csv))
DATA = sprintf("< awk -F, -f tools/csvsel.awk -v where='status=ok,m=1024,n=8192,k=8192,shortcut=0,kernel!=-1' -v cols='kernel,name,precision' -v pivot=max_dim -v pivotvals=1,0 -v val=x_kernel0 '%s'", csv)

set terminal pngcairo size 1400,800 font ",11" noenhanced
set output outdir.'/ladder.png'
set datafile missing 'NaN'
set title sprintf('x cuBLAS at M=1024 N=8192 K=8192 (kernel 0 = cuBLAS in the same precision mode; %s)', gpu)
set ylabel 'x kernel 0 (higher is faster)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -35 scale 0
set grid ytics lc rgb '#dddddd'
set yrange [0:*]
set key top left
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#555555' front
plot DATA using 4:xtic(sprintf('k%d %s %s', int($1), strcol(2), strcol(3))) lc rgb '#1f77b4' title 'max_dim 1', \
     ''   using 5 lc rgb '#ff7f0e' title 'max_dim 0', \
     ''   using ($0 - 0.15):4:(sprintf('%.2f', $4)) with labels offset 0,0.7 font ",8" notitle, \
     ''   using ($0 + 0.15):5:(sprintf('%.2f', $5)) with labels offset 0,0.7 font ",8" notitle
