# plots/xcublas_m.gp: speed over cuBLAS (x_kernel0: kernel 0's median over the row's, timed interleaved in the same
# run, same precision mode and max_dim) against M at N = K = 8192, full compute -> plots/xcublas_m.png. One panel per
# precision, max_dim 1 and max_dim 0 as two lines, each point labelled with the kernel that ran. The rows are the
# auto rows (matrix `row auto ...`, requested_kernel = auto); a CSV without auto rows (bench/results/h200.csv before
# they existed) gets the best kernel other than kernel 0 per (precision, max_dim, M) instead, and the title says
# which. Reads ONLY the benchmark CSV, through plots/plotdata.awk.
if (!exists("csv")) csv = 'bench/results/h200.csv'
if (!exists("outdir")) outdir = 'plots'
gpu = system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v cols=gpu '%s'", csv))
src = system(sprintf("awk -F, -f plots/plotdata.awk -v mode=src '%s'", csv))
what = (src eq 'auto') ? 'the auto kernel (the library''s pick)' : 'the best kernel per point (no auto rows in this CSV)'
DATA(p) = sprintf("< awk -F, -f plots/plotdata.awk -v mode=msweep -v prec=%s '%s'", p, csv)

set terminal pngcairo size 1400,1300 font ",11" noenhanced
set output outdir.'/xcublas_m.png'
set datafile missing 'NaN'
set logscale x 2
set xrange [0.8:20000]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64, "128" 128, "256" 256, "512" 512, "1024" 1024, \
           "2048" 2048, "4096" 4096, "8192" 8192, "16384" 16384)
set mxtics default
set grid xtics ytics lc rgb '#dddddd'
set ylabel 'x kernel 0 (higher is faster)'
set key bottom right horizontal opaque box
set lmargin 12
set rmargin 4
set offsets 0, 0, graph 0.12, graph 0.12
set multiplot layout 3,1 title sprintf("x cuBLAS against M (N = K = 8192, full compute): %s, numbers = kernel that ran; %s", what, gpu)
do for [p in "fp32 tf32 bf16"] {
    set title sprintf('%s (kernel 0 = %s)', p, p eq 'fp32' ? 'cuBLAS SGEMM' : p eq 'tf32' ? 'cuBLAS FAST_TF32' : 'cuBLAS bf16 GemmEx')
    if (p eq 'bf16') { set xlabel 'M (batch), log2 scale' } else { unset xlabel }
    plot 1 with lines lc rgb '#555555' dt 2 title 'cuBLAS (1.0)', \
         DATA(p) using 1:2 with linespoints lw 2 pt 7 ps 1.1 lc rgb '#1f77b4' title 'max_dim 1', \
         DATA(p) using 1:6 with linespoints lw 2 pt 5 ps 1.0 lc rgb '#ff7f0e' title 'max_dim 0', \
         DATA(p) using 1:2:(sprintf('%d', $3)) with labels offset 0,0.85 font ",8" tc rgb '#1f77b4' notitle, \
         DATA(p) using 1:6:(sprintf('%d', $7)) with labels offset 0,-0.85 font ",8" tc rgb '#ff7f0e' notitle
}
unset multiplot
