# plots/roofline.gp: the roofline of the headline shape (M=1024, N=K=8192) -> plots/roofline.png.
# Reads ONLY the benchmark CSV (csv, default bench/results/h200.csv; `make plots` passes it), through
# tools/csvsel.awk (columns by name). Ceilings: measured in the same run (rows named ceiling_*) drawn solid,
# datasheet H200 figures (bf16 989, tf32 495, fp32 67 TFLOP/s dense, 4.8 TB/s) dashed. One labelled point per
# kernel and precision (max_dim 1, full compute).
if (!exists("csv")) csv = 'bench/results/h200.csv'
if (!exists("outdir")) outdir = 'plots'
sel(where, cols) = sprintf("< awk -F, -f tools/csvsel.awk -v where='%s' -v cols='%s' '%s'", where, cols, csv)
one(where, col) = real(system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v where='%s' -v cols='%s' '%s'", where, col, csv)))
ok(v) = (v == v && v > 0)

HEAD = 'status=ok,m=1024,n=8192,k=8192'
bw   = one('name=ceiling_copy,status=ok', 'gbps') / 1000.0      # TB/s
cbf  = one('name=ceiling_bf16,status=ok', 'tflops')
ctf  = one('name=ceiling_tf32,status=ok', 'tflops')
cfp  = one('name=ceiling_fp32,status=ok', 'tflops')
gpu  = system(sprintf("awk -F, -f tools/csvsel.awk -v first=1 -v cols=gpu '%s'", csv))

set terminal pngcairo size 1400,900 font ",11" noenhanced
set output outdir.'/roofline.png'
set datafile missing 'NaN'
set logscale xy
set xrange [1:4000]
set yrange [0.5:1500]
set xlabel 'arithmetic intensity (flop per byte of x, W, b read once + out written)'
set ylabel 'TFLOP/s'
set title sprintf('maxgemm roofline, M=1024 N=8192 K=8192, max_dim 1 (%s)', gpu)
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key outside right top

roof(x, peak, b) = (b * x < peak) ? b * x : peak
DS_BW = 4.8
set style line 1 lc rgb '#1f77b4' lw 2
set style line 2 lc rgb '#2ca02c' lw 2
set style line 3 lc rgb '#d62728' lw 2
set style line 4 lc rgb '#1f77b4' lw 1 dt 2
set style line 5 lc rgb '#2ca02c' lw 1 dt 2
set style line 6 lc rgb '#d62728' lw 1 dt 2
set samples 400

PTS = HEAD.',shortcut=0,max_dim=1,kernel!=-1'
plot \
  roof(x, 989, DS_BW) ls 4 title 'bf16 datasheet 989 / 4.8 TB/s', \
  roof(x, 495, DS_BW) ls 5 title 'tf32 datasheet 495', \
  roof(x, 67,  DS_BW) ls 6 title 'fp32 datasheet 67', \
  (ok(cbf) && ok(bw) ? roof(x, cbf, bw) : 1/0) ls 1 title sprintf('bf16 cuBLAS measured %.0f / copy %.2f TB/s', cbf, bw), \
  (ok(ctf) && ok(bw) ? roof(x, ctf, bw) : 1/0) ls 2 title sprintf('tf32 cuBLAS measured %.0f', ctf), \
  (ok(cfp) && ok(bw) ? roof(x, cfp, bw) : 1/0) ls 3 title sprintf('fp32 cuBLAS SGEMM measured %.0f', cfp), \
  sel(PTS.',precision=bf16', 'intensity,tflops') using 1:2 with points pt 7 ps 1.6 lc rgb '#1f77b4' title 'bf16 kernels', \
  sel(PTS.',precision=tf32', 'intensity,tflops') using 1:2 with points pt 5 ps 1.6 lc rgb '#2ca02c' title 'tf32 kernels', \
  sel(PTS.',precision=fp32', 'intensity,tflops') using 1:2 with points pt 9 ps 1.8 lc rgb '#d62728' title 'fp32 kernels', \
  sel(PTS, 'intensity,tflops,kernel,name,precision') using 1:((int($3) % 2 == 0 && int($3) != 0) ? $2 : NaN):(sprintf('k%d %s %s', $3, strcol(4), strcol(5))) \
      with labels left offset 1.2,0 font ",9" notitle, \
  sel(PTS, 'intensity,tflops,kernel,name,precision') using 1:((int($3) % 2 == 1 || int($3) == 0) ? $2 : NaN):(sprintf('k%d %s %s', $3, strcol(4), strcol(5))) \
      with labels right offset -1.2,0 font ",9" notitle
