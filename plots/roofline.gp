# plots/roofline.gp: the roofline of the headline shape (M=1024, N=K=8192) -> plots/roofline.png.
# Reads ONLY the benchmark CSV (csv, default bench/results/h200.csv; `make plots` passes it), through tools/csvsel.awk
# and plots/plotdata.awk (columns by name). Ceilings: measured in the same run (rows named ceiling_*) drawn solid,
# datasheet figures (int8 1979 TOPS, bf16 989, tf32 495, fp32 67 TFLOP/s dense, the same on H100 and H200 SXM; 4.8 TB/s
# on an H200, 3.35 on an H100, by the CSV's gpu column) dashed. One point per
# explicit kernel and precision (max_dim 1, full compute; auto rows left out: they repeat a kernel's point). The
# split-precision kernels are drawn where they run: 5, 6 (fp32 accuracy from three bf16 GEMMs) against the bf16 roof,
# 9, 10 (three s8 products) against the int8 roof, each at 3 x the intensity and 3 x the rate of their fp32 problem
# (the int8 roof measured by cuBLAS's s8 GemmEx where the CSV has a ceiling_int8 row, which CSVs before run 157 lack).
# The labels stand in one column right of the
# points, spread apart so that none overlap, each joined to its point by a thin line.
if (!exists("csv")) csv = 'bench/results/h200.csv'
if (!exists("outdir")) outdir = 'plots'
ok(v) = (v == v && v > 0)

roofs = system(sprintf("awk -F, -f plots/plotdata.awk -v mode=roofs '%s'", csv))
bw   = real(word(roofs, 1)) / 1000.0      # TB/s
cbf  = real(word(roofs, 2))
ctf  = real(word(roofs, 3))
cfp  = real(word(roofs, 4))
ci8  = real(word(roofs, 5))
gpu  = system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v cols=gpu '%s'", csv))
YMAX = 3000
XLAB = 2000
PTS  = sprintf("< awk -F, -f plots/plotdata.awk -v mode=roofpts -v xlab=%g -v gap=62 -v ymax=%g '%s'", XLAB, YMAX * 0.92, csv)

set terminal pngcairo size 1400,900 font ",11" noenhanced
set output outdir.'/roofline.png'
set datafile missing 'NaN'
set logscale xy
set xrange [1:12000]
set yrange [0.5:YMAX]
set xlabel 'arithmetic intensity (flop per byte of x, W, b read once + out written)'
set ylabel 'TFLOP/s (TOPS for the int8 products)'
set title sprintf('maxgemm roofline, M=1024 N=8192 K=8192, max_dim 1 (%s)', gpu)
set grid xtics ytics mxtics mytics lc rgb '#eeeeee'
# the key in the empty band under the fp32 roof and right of the slanted memory roofs
set key at first 14, first 38 left top Left reverse opaque box samplen 3 font ",10"
set style textbox opaque noborder margins 1,0

roof(x, peak, b) = (b * x < peak) ? b * x : peak
DS_BW = strstrt(gpu, 'H100') > 0 ? 3.35 : 4.8
set style line 1 lc rgb '#1f77b4' lw 2
set style line 2 lc rgb '#2ca02c' lw 2
set style line 3 lc rgb '#d62728' lw 2
set style line 4 lc rgb '#1f77b4' lw 1 dt 2
set style line 5 lc rgb '#2ca02c' lw 1 dt 2
set style line 6 lc rgb '#d62728' lw 1 dt 2
set style line 7 lc rgb '#ff7f0e' lw 1 dt 2
set style line 8 lc rgb '#ff7f0e' lw 2
set samples 400
# point colour and shape per precision (the label's last word; split kernels carry "(x3 bf16)")
is(s, w) = strstrt(s, w) > 0
pc(s) = is(s, 'x3 bf16') ? 0x9467bd : is(s, 'x3 int8') ? 0xff7f0e : is(s, 'bf16') ? 0x1f77b4 : is(s, 'tf32') ? 0x2ca02c : 0xd62728
split(s) = is(s, 'x3 bf16') || is(s, 'x3 int8')

plot \
  roof(x, 1979, DS_BW) ls 7 title 'int8 datasheet 1979 TOPS', \
  roof(x, 989, DS_BW) ls 4 title sprintf('bf16 datasheet 989 TFLOP/s, %g TB/s', DS_BW), \
  roof(x, 495, DS_BW) ls 5 title 'tf32 datasheet 495', \
  roof(x, 67,  DS_BW) ls 6 title 'fp32 datasheet 67', \
  (ok(cbf) && ok(bw) ? roof(x, cbf, bw) : 1/0) ls 1 title sprintf('bf16 cuBLAS measured %.0f, copy %.2f TB/s', cbf, bw), \
  (ok(ctf) && ok(bw) ? roof(x, ctf, bw) : 1/0) ls 2 title sprintf('tf32 cuBLAS measured %.0f', ctf), \
  (ok(cfp) && ok(bw) ? roof(x, cfp, bw) : 1/0) ls 3 title sprintf('fp32 cuBLAS SGEMM measured %.0f', cfp), \
  (ok(ci8) && ok(bw) ? roof(x, ci8, bw) : 1/0) ls 8 title sprintf('int8 cuBLAS s8 GemmEx measured %.0f TOPS', ci8), \
  PTS using 3:4:($1 * 1.06 - $3):($2 - $4) with vectors nohead lc rgb '#bbbbbb' lw 1 notitle, \
  PTS using 1:(split(strcol(5)) ? NaN : is(strcol(5), 'bf16') ? $2 : NaN) with points pt 7 ps 1.6 lc rgb '#1f77b4' title 'bf16 kernels', \
  PTS using 1:(is(strcol(5), 'tf32') ? $2 : NaN) with points pt 5 ps 1.6 lc rgb '#2ca02c' title 'tf32 kernels', \
  PTS using 1:(split(strcol(5)) || !is(strcol(5), 'fp32') ? NaN : $2) with points pt 9 ps 1.8 lc rgb '#d62728' title 'fp32 kernels (SIMT: 0, 1) on the fp32 roof', \
  PTS using 1:(is(strcol(5), 'x3 bf16') ? $2 : NaN) with points pt 13 ps 1.8 lc rgb '#9467bd' title 'fp32 split kernels 5, 6 against the bf16 roof they run on (3 bf16 GEMMs: drawn at 3 x flop and 3 x intensity)', \
  PTS using 1:(is(strcol(5), 'x3 int8') ? $2 : NaN) with points pt 11 ps 1.8 lc rgb '#ff7f0e' title 'fp32 split kernels 9, 10 against the int8 roof they run on (3 s8 products: drawn at 3 x op and 3 x intensity)', \
  PTS using 3:4:5:(pc(strcol(5))) with labels left offset 0.3,0 font ",9" tc rgb variable boxed notitle
