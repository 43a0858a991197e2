# prepared run 125 (session 24, no device): C, the merge candidate (notes/runs/r123_plan_combined.diff: EU, i.e. U and
# the early issue, with GW, i.e. the warm run of the grid finish and fp32's GELU after mu), tested whole and
# benchmarked on the full matrix, from run 123's pack (its BIN lines build bench_C and test_C). Run it after run 123
# in place of run 124 when run 123's A/B has C ahead of A in every (precision, max_dim, M range) cell and each of its
# parts (U, EU, G, W) ahead of or level with A where it acts; otherwise run 124, merge the parts that won, and
# benchmark the merge (tools/gpu_session.sh OUT bench from a make bundle of it).
#   tools/pack_bundle.sh notes/runs/r123_plan.sh            (if bundle/pack.tar.xz is not there yet)
#   tar xJf bundle/pack.tar.xz && bash notes/runs/r125_plan.sh $OUT      (carry ["bundle"], timeout 600; ~8 minutes, 10 at most)
# Then: if the suite passed and the sanitizers are clean, apply the diff (patch -p1), commit, and commit
# OUT/r125/h200.csv as bench/results/h200.csv (its commit column reads <base>+C: the same source), make plots,
# update the README table (tools/readme_table.sh) and notes/18_small_m.md "Where it stands".
# What it checks: the whole GPU suite (every generic suite: odd shapes, planted NaN/inf, K = 0, partial maxima; kernel
# 8's own; the determinism suites: run 120 took 246 s on a warm machine), the full benchmark (bench/matrix.txt with
# the committed dispatch table, every kernel paired with kernel 0: the CSV the plots and the bars read), then
# racecheck, synccheck and initcheck on the max_dim 0 slots test (the early-issued stages, the zero box, the warm run's
# reads of the shared scratch and the grid finish in one CTA; its plans with and without their own rows: initcheck
# sees whether the warm run reads anything this launch has not written). The benchmark took 78-88 s for runs 49-55's
# matrix, so 180 s leaves room for today's 996 rows.
O=$1/r125; mkdir -p $O
export LD_LIBRARY_PATH=$PWD/bundle/lib:/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 290 bundle/bin/test_C --jobs 1 --filter 'gpu_*/*' > $O/test_C.log 2>&1
echo "test_C gpu rc $? t=$(el)" >> $O/steps.txt
tar czf $1/r125.tgz -C $1 r125
timeout 180 bundle/bin/bench_C --matrix bench/matrix.txt --csv $O/h200.csv > $O/bench_C.log 2>&1
echo "bench_C rc $? rows $(wc -l < $O/h200.csv 2>/dev/null) t=$(el)" >> $O/steps.txt
tar czf $1/r125.tgz -C $1 r125
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck synccheck initcheck; do
  timeout 40 $SAN --tool $tool --target-processes all --error-exitcode 99 bundle/bin/test_C --jobs 1 \
    --filter 'gpu_kernels/swapab_md0_slots' > $O/${tool}_C.log 2>&1
  echo "${tool}_C rc $? t=$(el)" >> $O/steps.txt
done
tar czf $1/r125.tgz -C $1 r125
