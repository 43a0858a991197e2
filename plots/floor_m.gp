# plots/floor_m.gp: percent of the floor against M at N = K = 8192, full compute -> plots/floor_m.png. One panel per
# precision; max_dim 1 and 0 as solid lines for the auto rows (or, in a CSV without auto rows, the best kernel other
# than kernel 0 per point, as plots/xcublas_m.gp; the title says which) and dashed for kernel 0, timed interleaved
# with that row. 100% = the floor: max(bytes / copy rate, flop / roof), with every figure measured in the same run
# (the ceiling rows, kernel -1): bytes = x, W, b read once + out written; copy rate = ceiling_copy's GB/s; roof = the
# cuBLAS ceiling of the precision, except fp32: the fp32-accurate kernels (5, 6) run three bf16 GEMMs on the tensor
# cores, so fp32 is drawn against 3 x the bf16 time (kernel 0 in fp32 is SGEMM, far below that roof, and kernel 7 at
# small M is memory-bound, where the roof does not matter). Reads ONLY the CSV, through plots/plotdata.awk.
if (!exists("csv")) csv = 'bench/results/h200.csv'
if (!exists("outdir")) outdir = 'plots'
gpu = system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v cols=gpu '%s'", csv))
src = system(sprintf("awk -F, -f plots/plotdata.awk -v mode=src '%s'", csv))
roofs = system(sprintf("awk -F, -f plots/plotdata.awk -v mode=roofs '%s'", csv))
copy = real(word(roofs, 1))
cbf = real(word(roofs, 2))
ctf = real(word(roofs, 3))
ci8 = real(word(roofs, 5))
i8note = (ci8 == ci8 && ci8 > 0) ? sprintf("cuBLAS's s8 GemmEx measured %.0f TOPS here", ci8) : "no int8 ceiling in this CSV"
who = (src eq 'auto') ? 'auto' : 'best kernel'
what = (src eq 'auto') ? 'the auto kernel' : 'the best kernel per point (no auto rows in this CSV)'
DATA(p) = sprintf("< awk -F, -f plots/plotdata.awk -v mode=msweep -v prec=%s '%s'", p, csv)
roof(p) = p eq 'bf16' ? sprintf('bytes (2 B) / copy %.0f GB/s, or 2MNK / cuBLAS bf16 %.0f TFLOP/s', copy, cbf) : \
          p eq 'tf32' ? sprintf('bytes (4 B) / copy %.0f GB/s, or 2MNK / cuBLAS tf32 %.0f TFLOP/s', copy, ctf) : \
          sprintf("bytes (4 B) / copy %.0f GB/s, or 3 x 2MNK / cuBLAS bf16 %.0f TFLOP/s (split fp32 = 3 bf16 GEMMs))\nabove 100%%: kernels 10 and 11 run three s8 products instead, faster than the bf16 split this floor assumes (%s", copy, cbf, i8note)

set terminal pngcairo size 1400,1300 font ",11" noenhanced
set output outdir.'/floor_m.png'
set datafile missing 'NaN'
set logscale x 2
set xrange [0.8:20000]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64, "128" 128, "256" 256, "512" 512, "1024" 1024, \
           "2048" 2048, "4096" 4096, "8192" 8192, "16384" 16384)
set grid xtics ytics lc rgb '#dddddd'
set ylabel '% of the floor (100 = at the floor)'
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set key bottom right horizontal opaque box samplen 2
set lmargin 12
set rmargin 4
set multiplot layout 3,1 title sprintf("Percent of the floor against M (N = K = 8192, full compute, %s): %s; numbers = kernel that ran\nfloor = max(x, W, b read once + out written at the copy rate, flop at the roof), all measured in the same run; kernel 0 dotted, timed interleaved with that row", gpu, what)
do for [p in "fp32 tf32 bf16"] {
    set title sprintf('%s: floor = max(%s)', p, roof(p))
    if (p eq 'bf16') { set xlabel 'M (batch), log2 scale' } else { unset xlabel }
    plot 100 with lines lc rgb '#555555' dt 2 title 'the floor (100%)', \
         DATA(p) using 1:4 with linespoints lw 2 pt 7 ps 1.1 lc rgb '#1f77b4' title who.' max_dim 1', \
         DATA(p) using 1:8 with linespoints lw 2 pt 5 ps 1.0 lc rgb '#ff7f0e' title who.' max_dim 0', \
         DATA(p) using 1:5 with linespoints lw 1 dt 3 pt 6 ps 0.9 lc rgb '#1f77b4' title 'kernel 0 max_dim 1', \
         DATA(p) using 1:9 with linespoints lw 1 dt 3 pt 4 ps 0.8 lc rgb '#ff7f0e' title 'kernel 0 max_dim 0', \
         DATA(p) using 1:4:(sprintf('%d', $3)) with labels offset 0,0.85 font ",8" tc rgb '#1f77b4' notitle
}
unset multiplot
