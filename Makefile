# maxgemm: a pattern-rule Makefile. `make` builds build/maxgemm, build/libmaxgemm.{a,so}; `make test` runs every test.
# CUDA is compiled for Hopper (sm_90a: wgmma, setmaxnreg, TMA). Nothing links -lcuda: driver entry points
# (cuTensorMapEncodeTiled) come through cudaGetDriverEntryPoint, so binaries start on machines with no driver.

NVCC       ?= nvcc
CC         ?= gcc
CUDA_HOME  ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
ifeq ($(CUDA_HOME),)
CUDA_HOME  := /usr/local/cuda
endif
GENCODE    ?= -gencode=arch=compute_90a,code=sm_90a
BUILD      ?= build
# The tile shapes compiled in (tile_configs/README.md). tools/tune.sh builds variants with TILE_DIR=<dir> and a
# separate BUILD=<dir>, so a variant never mixes with the default build's objects.
TILE_DIR   ?= tile_configs

CFLAGS     ?= -O2 -g
CFLAGS     += -std=c11 -Wall -Wextra -D_GNU_SOURCE -fPIC -Isrc -I$(BUILD)/gen -I$(CUDA_HOME)/include
NVCCFLAGS  ?= -O3 -lineinfo
NVCCFLAGS  += -std=c++17 $(GENCODE) -Xcompiler -fPIC,-Wall -Xptxas -v,--warn-on-spills -Isrc -Ikernels -I$(BUILD)/gen \
              --expt-relaxed-constexpr
LDLIBS     := -L$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lcudart_static -lpthread -ldl -lrt -lm -lstdc++

LIB_C      := $(filter-out src/cli.c,$(wildcard src/*.c))
LIB_CU     := $(wildcard kernels/*.cu)
LIB_OBJ    := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_C)) $(patsubst kernels/%.cu,$(BUILD)/obj/%.cu.o,$(LIB_CU)) \
              $(BUILD)/obj/mg_tiles.o $(BUILD)/obj/dispatch_table.o
TEST_SRC   := $(wildcard test/*.c)
TEST_OBJ   := $(patsubst test/%.c,$(BUILD)/obj/test/%.o,$(TEST_SRC))
HEADERS    := $(wildcard src/*.h kernels/*.cuh) $(BUILD)/gen/mg_tiles.h

.PHONY: ptxas-report all test python-test run bench plots ncu nsys sass bundle clean
# `make` (all) needs no Criterion: the library, the CLI, the benchmark and the soak. `make test` builds the tests.
all: $(BUILD)/maxgemm $(BUILD)/libmaxgemm.a $(BUILD)/libmaxgemm.so $(BUILD)/maxgemm_soak $(BUILD)/maxgemm_bench

# tile_configs/*.cfg are data: a generator validates them and emits the instantiation macros and a C table.
$(BUILD)/gen_tiles: tools/gen_tiles.c tools/gen_io.h src/tile_config.c src/tile_config.h | $(BUILD)/gen
	$(CC) $(CFLAGS) -DMG_TILE_PARSER_ONLY -o $@ tools/gen_tiles.c src/tile_config.c
$(BUILD)/gen/mg_tiles.h $(BUILD)/gen/mg_tiles.c &: $(BUILD)/gen_tiles $(wildcard $(TILE_DIR)/*.cfg)
	$(BUILD)/gen_tiles $(BUILD)/gen/mg_tiles.h $(BUILD)/gen/mg_tiles.c $(sort $(wildcard $(TILE_DIR)/*.cfg))
$(BUILD)/obj/mg_tiles.o: $(BUILD)/gen/mg_tiles.c $(BUILD)/gen/mg_tiles.h | $(BUILD)/obj
	$(CC) $(CFLAGS) -c -o $@ $<

# tile_configs/dispatch/*.tsv: the measured dispatch tables auto reads, one per GPU (tile_configs/README.md). The
# generator checks them with the library's own parser (src/dispatch.c) and compiles them in as C: the library never
# reads a table file or the environment to find one. The directory is a prerequisite so that removing a table
# regenerates too.
DISPATCH_DIR ?= tile_configs/dispatch
DISPATCH_TSV := $(sort $(wildcard $(DISPATCH_DIR)/*.tsv))
$(BUILD)/gen_dispatch: tools/gen_dispatch.c tools/gen_io.h src/dispatch.c src/dispatch.h src/optkeys.c src/optkeys.h \
                      | $(BUILD)/gen
	$(CC) $(CFLAGS) -DMG_DISPATCH_PARSER_ONLY -o $@ tools/gen_dispatch.c src/dispatch.c src/optkeys.c
$(BUILD)/gen/dispatch_table.c: $(BUILD)/gen_dispatch $(DISPATCH_TSV) $(wildcard $(DISPATCH_DIR))
	$(BUILD)/gen_dispatch $@ $(DISPATCH_TSV)
$(BUILD)/obj/dispatch_table.o: $(BUILD)/gen/dispatch_table.c $(HEADERS) | $(BUILD)/obj
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: src/%.c $(HEADERS) | $(BUILD)/obj
	$(CC) $(CFLAGS) -c -o $@ $<
# A kernel object depends on what it includes (nvcc -MMD writes $(BUILD)/obj/NAME.cu.d beside it; -MP keeps a deleted
# header from breaking the build), not on every header: a change to kernel 8's headers rebuilds kernel 8 alone, which
# is what makes tools/variant_build.sh's SEED= builds take a minute or two. An object without its .d file (built
# before this rule, or the first build) depends on every header, as before.
CU_OBJ     := $(patsubst kernels/%.cu,$(BUILD)/obj/%.cu.o,$(LIB_CU))
$(foreach o,$(CU_OBJ),$(if $(wildcard $(o:.o=.d)),,$(eval $(o): $(HEADERS))))
-include $(wildcard $(CU_OBJ:.o=.d))
$(BUILD)/obj/%.cu.o: kernels/%.cu $(BUILD)/gen/mg_tiles.h | $(BUILD)/obj
	$(NVCC) $(NVCCFLAGS) -MMD -MP -MF $(BUILD)/obj/$*.cu.d -c -o $@ $< 2> $(BUILD)/obj/$*.ptxas.txt || \
	  { cat $(BUILD)/obj/$*.ptxas.txt; exit 1; }
	@if grep -q -i "spill" $(BUILD)/obj/$*.ptxas.txt && grep -E -q "[1-9][0-9]* bytes spill" $(BUILD)/obj/$*.ptxas.txt; then \
	  echo "ptxas reports spills in kernels/$*.cu:"; grep -E "spill|Compiling" $(BUILD)/obj/$*.ptxas.txt; fi
$(BUILD)/obj/test/%.o: test/%.c $(HEADERS) bench/matrix.h | $(BUILD)/obj/test
	$(CC) $(CFLAGS) -Itest -Ibench -c -o $@ $<

# The registry references every kernel's ops directly, so linking the archive links every kernel.
WHOLE_LIB  := $(BUILD)/libmaxgemm.a
$(BUILD)/libmaxgemm.a: $(LIB_OBJ)
	ar rcs $@ $^
$(BUILD)/libmaxgemm.so: $(LIB_OBJ)
	$(NVCC) -shared -o $@ $^ -lcublas -lcublasLt
$(BUILD)/obj/cli.o: CFLAGS += -DMG_GIT_COMMIT='"$(MG_GIT_COMMIT)"'
# The commit that cli.o and bench.o embed (the CLI's --version, every CSV row of maxgemm_bench): a stamp rewritten
# only when MG_GIT_COMMIT changes, so that both are rebuilt after a commit; without it a bundle's binaries reported
# the commit they were last compiled at (run 123's read 3cac878-dirty, two commits behind).
$(BUILD)/commit.stamp: FORCE | $(BUILD)/obj
	@echo '$(MG_GIT_COMMIT)' | cmp -s - $@ || echo '$(MG_GIT_COMMIT)' > $@
.PHONY: FORCE
FORCE:
$(BUILD)/obj/cli.o $(BUILD)/obj/bench/bench.o: $(BUILD)/commit.stamp
$(BUILD)/obj/test/test_cli_args.o: CFLAGS += -DMG_CLI_BIN='"$(BUILD)/maxgemm"'
$(BUILD)/obj/test/test_dispatch.o: CFLAGS += -DMG_GEN_DISPATCH_BIN='"$(BUILD)/gen_dispatch"'
$(BUILD)/obj/test/test_tile_config.o: CFLAGS += -DMG_GEN_TILES_BIN='"$(BUILD)/gen_tiles"'
$(BUILD)/maxgemm: $(BUILD)/obj/cli.o $(BUILD)/libmaxgemm.a
	$(NVCC) -o $@ $< $(WHOLE_LIB) -lcublas -lcublasLt -ldl -lm
# the tests also hold the benchmark matrix parser (bench/matrix.c: test/test_bench_matrix.c)
$(BUILD)/test_maxgemm: $(TEST_OBJ) $(BUILD)/obj/bench/matrix.o $(BUILD)/libmaxgemm.a
	$(NVCC) -o $@ $(TEST_OBJ) $(BUILD)/obj/bench/matrix.o $(WHOLE_LIB) -lcublas -lcublasLt -lcriterion -lm
# The reliability soak and the compute-sanitizer sweep (notes/reliability.md). `make sanitize` needs a GPU and
# compute-sanitizer; without them the script says so and exits 77, which counts as skipped here.
$(BUILD)/maxgemm_soak: tools/soak.c $(HEADERS) $(BUILD)/libmaxgemm.a | $(BUILD)/obj
	$(CC) $(CFLAGS) -c -o $(BUILD)/obj/tool_soak.o tools/soak.c
	$(NVCC) -o $@ $(BUILD)/obj/tool_soak.o $(WHOLE_LIB) -lcublas -lcublasLt -lm
.PHONY: sanitize
sanitize: $(BUILD)/maxgemm
	tools/sanitize.sh $(BUILD) || { rc=$$?; [ $$rc -eq 77 ]; }

$(BUILD)/gen $(BUILD)/obj $(BUILD)/obj/test:
	mkdir -p $@

# Every test: CPU suites run anywhere; GPU suites skip cleanly where there is no device.
# tools/run_tests.sh also says how many tests were skipped and why (no GPU: the GPU suites did not run).
# test/test_dispatch_tune.py: the dispatch table's pick step (tools/dispatch_tune.py) on its fixtures, and
# test/test_ab_variants.py: tools/ab_variants.py's A/B table on made-up passes, where python3 is.
test: $(BUILD)/test_maxgemm $(BUILD)/maxgemm $(BUILD)/gen_dispatch
	tools/run_tests.sh $(BUILD)/test_maxgemm --jobs 1
	@if command -v python3 > /dev/null; then python3 test/test_dispatch_tune.py --build $(BUILD) && \
	python3 test/test_ab_variants.py && python3 test/test_sweep_summary.py; \
	else echo "test: no python3: the python tests skipped"; fi

run: $(BUILD)/maxgemm
	$(BUILD)/maxgemm run --check

# The maxgemm_torch package without a GPU: a venv, pip install ./python (bundling the library), the import, the
# no-device error and python/test_cpu.py. Skipped (test_install.sh exits 77) where python3 has no torch;
# MAXGEMM_TEST_TORCH=torch installs it into a venv first.
python-test: $(BUILD)/libmaxgemm.so
	bash python/test_install.sh || [ $$? -eq 77 ]

clean:
	rm -rf $(BUILD)

# A self-contained bundle for a GPU host that lacks the dev packages: the binaries, the shared library and the
# non-system shared libraries they load (Criterion and its dependencies), beside a run script. CUDA's own
# libraries (cudart, cuBLAS) and glibc are left out: the GPU host has its own.
BUNDLE_BINS := $(BUILD)/maxgemm $(BUILD)/test_maxgemm $(BUILD)/libmaxgemm.so $(wildcard $(BUILD)/maxgemm_bench) \
               $(wildcard $(BUILD)/maxgemm_soak) $(BUILD)/probe_l2 $(BUILD)/probe_start
bundle: all $(BUILD)/probe_l2 $(BUILD)/probe_start
	rm -rf bundle && mkdir -p bundle/bin bundle/lib
	cp $(BUNDLE_BINS) bundle/bin/
	for f in $(BUNDLE_BINS); do ldd $$f; done | awk '/=> \// {print $$3}' | sort -u | \
	  grep -v -E '/(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcublas[^/]*|libcublasLt[^/]*|libcudart[^/]*)\.so' | \
	  xargs -r -I{} cp -L {} bundle/lib/
	@echo "bundle/: $$(ls bundle/bin | tr '\n' ' ')| libs: $$(ls bundle/lib | tr '\n' ' ')"

# tools/probe_l2.cu: read-stream and L2-residency probe behind the short-circuit's classify (notes/shortcut.md)
$(BUILD)/probe_l2: tools/probe_l2.cu tools/probe_common.cuh $(BUILD)/libmaxgemm.so $(BUILD)/obj/bench/bare_write.cu.o
	@mkdir -p $(BUILD)
	$(NVCC) -O3 -std=c++17 $(GENCODE) -Isrc -Ibench -o $@ $< $(BUILD)/obj/bench/bare_write.cu.o -L$(BUILD) -lmaxgemm \
	  -Xlinker -rpath,'$$ORIGIN'

# tools/probe_start.cu: a W stream's fixed cost piece by piece (ld, bulk-copy ring, kernel 8's CTA shape and
# setmaxnreg, kernel 8's finish; notes/18_small_m.md "Session 31")
$(BUILD)/probe_start: tools/probe_start.cu tools/probe_common.cuh kernels/swapab_finish.cuh $(BUILD)/libmaxgemm.so
	@mkdir -p $(BUILD)
	$(NVCC) -O3 -std=c++17 $(GENCODE) -Isrc -Ikernels -I$(BUILD)/gen -o $@ $< -L$(BUILD) -lmaxgemm -Xlinker -rpath,'$$ORIGIN'

# ---- benchmark, plots, profiling: `make bench`, `make plots`, `make ncu KERNEL=N`, `make sass KERNEL=N` ----------
# The commit recorded in every CSV row; override with `make bench MG_GIT_COMMIT=...` where there is no .git.
MG_GIT_COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell [ -n "$$(git status --porcelain 2>/dev/null | head -1)" ] && echo -dirty)
BENCH_OBJ  := $(BUILD)/obj/bench/bench.o $(BUILD)/obj/bench/matrix.o $(BUILD)/obj/bench/bare_write.cu.o
CSV        ?= bench/results/latest.csv
BENCH_ARGS ?=
PLOT_CSV   ?= bench/results/h200.csv
PLOT_DIR   ?= plots
README     ?= README.md
PREC       ?= bf16
MAXDIM     ?= 1
NCU        ?= ncu
CUOBJDUMP  ?= $(firstword $(wildcard $(CUDA_HOME)/bin/cuobjdump) cuobjdump)
NCU_TAG     = k$(KERNEL)_$(PREC)$(if $(filter-out 1 -1,$(MAXDIM)),_md$(MAXDIM))
# `make ncu` and `make sass` write under $(NCU_DIR) / $(SASS_DIR), never into the tracked notes/ (only the small
# .counts summaries go to notes/sass/); .ncu-rep files are not committed (.gitignore).
NCU_DIR    ?= $(BUILD)/ncu
SASS_DIR   ?= $(BUILD)/sass
# Metric names this ncu (Hopper, CUDA 13.0) has, checked against the CSV by tools/ncu_check_metrics.sh: SOL compute /
# memory, the tensor pipe (sm__pipe_tensor_op_hmma_*: counts wgmma as well as mma.sync here; there is no *_gmma_*
# pipe metric), the FMA pipe, DRAM bytes, achieved occupancy, the launch's registers and shared memory.
NCU_METRICS ?= gpu__time_duration.sum,smsp__cycles_elapsed.avg.per_second,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__grid_size,launch__block_size,launch__cluster_dim_x

$(BUILD)/obj/bench:
	mkdir -p $@
$(BUILD)/obj/bench/%.o: bench/%.c bench/matrix.h bench/bare_write.h $(HEADERS) | $(BUILD)/obj/bench
	$(CC) $(CFLAGS) -Ibench -DMG_GIT_COMMIT='"$(MG_GIT_COMMIT)"' -c -o $@ $<
$(BUILD)/obj/bench/%.cu.o: bench/%.cu bench/bare_write.h $(HEADERS) | $(BUILD)/obj/bench
	$(NVCC) $(NVCCFLAGS) -Ibench -c -o $@ $<
$(BUILD)/maxgemm_bench: $(BENCH_OBJ) $(BUILD)/libmaxgemm.a
	$(NVCC) -o $@ $(BENCH_OBJ) $(WHOLE_LIB) -lcublas -lcublasLt -ldl -lm

# The whole matrix (bench/matrix.txt) -> $(CSV). A full run (no BENCH_ARGS) on an H200 that passes every check also
# becomes bench/results/h200.csv, the file the plots and the README table read.
bench: $(BUILD)/maxgemm_bench
	$(BUILD)/maxgemm_bench --commit $(MG_GIT_COMMIT) --csv $(CSV) $(BENCH_ARGS)
	@if [ -z "$(strip $(BENCH_ARGS))" ] && grep -q ',NVIDIA H200' $(CSV); then \
	  cp $(CSV) bench/results/h200.csv && echo "bench: copied $(CSV) to bench/results/h200.csv"; fi

# ---- the measured dispatch table (notes/dispatch.md) ------------------------------------------------------------
# `make tune-dispatch` (GPU host): the sweep of every candidate kernel x option variant per (precision, max_dim, M),
# paired with kernel 0, into $(TUNE_DIR)/tune.csv (tools/tune_dispatch.sh; TUNE_ARGS: more options for
# tools/dispatch_tune.py matrix, e.g. TUNE_ARGS='--m 1,2,4 --precisions bf16'). `make dispatch-pick` (any machine):
# the winners of $(TUNE_CSV) (one CSV or several, e.g. one per precision; FILE:PRECS takes only those precisions'
# rows of FILE, e.g. 'tune.csv:tf32,bf16 old.csv:fp32') at N = TUNE_N, K = TUNE_K into $(DISPATCH_DIR)/<gpu>.tsv,
# the file to commit.
TUNE_DIR   ?= $(BUILD)/tune_dispatch
TUNE_CSV   ?= $(TUNE_DIR)/tune.csv
TUNE_N     ?= 8192
TUNE_K     ?= 8192
TUNE_ARGS  ?=
.PHONY: tune-dispatch dispatch-pick
tune-dispatch: $(BUILD)/maxgemm $(BUILD)/maxgemm_bench
	tools/tune_dispatch.sh $(BUILD) $(TUNE_DIR) --n $(TUNE_N) --k $(TUNE_K) $(TUNE_ARGS)
dispatch-pick: $(BUILD)/maxgemm
	@for f in $(TUNE_CSV); do p=$$(echo "$$f" | sed -E 's/:(fp32|tf32|bf16)(,(fp32|tf32|bf16))*$$//'); test -f "$$p" || { echo "dispatch-pick: $$p not found: run 'make tune-dispatch' on the GPU host (or TUNE_CSV='FILE[:PRECS] ...')"; exit 1; }; done
	mkdir -p $(TUNE_DIR) $(DISPATCH_DIR)
	$(BUILD)/maxgemm list --csv $(TUNE_DIR)/registry.csv
	python3 tools/dispatch_tune.py pick $(TUNE_CSV) --registry $(TUNE_DIR)/registry.csv --n $(TUNE_N) --k $(TUNE_K) \
	  --out-dir $(DISPATCH_DIR) --command "make dispatch-pick TUNE_CSV=$(TUNE_CSV)"

# plots/*.png from $(PLOT_CSV) only, then the README results table between its markers (README= skips the table:
# another GPU's plots, e.g. make plots PLOT_CSV=bench/results/h100.csv PLOT_DIR=plots/h100 README=).
plots:
	@test -f $(PLOT_CSV) || { echo "plots: $(PLOT_CSV) not found: run 'make bench' on an H200 (or PLOT_CSV=FILE)"; exit 1; }
	@mkdir -p $(PLOT_DIR)
	@for g in plots/*.gp; do echo "gnuplot $$g"; gnuplot -e "csv='$(PLOT_CSV)'; outdir='$(PLOT_DIR)'" $$g || exit 1; done
	@if [ -n "$(README)" ]; then tools/readme_table.sh $(PLOT_CSV) $(README); fi

# Nsight Compute on one forward of kernel KERNEL: the full report and a CSV of the metrics above, in $(NCU_DIR)
# (default $(BUILD)/ncu; `make ncu NCU_DIR=DIR` elsewhere). A metric name that ncu does not know is left out of the
# CSV without an error: tools/ncu_check_metrics.sh fails the target then, naming it.
ncu: $(BUILD)/maxgemm $(BUILD)/maxgemm_bench
	@test -n "$(KERNEL)" || { echo "usage: make ncu KERNEL=N [PREC=bf16] [MAXDIM=1] [NCU_REGEX=kernel-name-regex] [NCU_DIR=dir]"; exit 2; }
	@command -v $(NCU) > /dev/null || { echo "ncu: $(NCU) not found (Nsight Compute; set NCU=/path/to/ncu)"; exit 1; }
	mkdir -p $(NCU_DIR)
	regex='$(NCU_REGEX)'; [ -n "$$regex" ] || regex=$$($(BUILD)/maxgemm_bench --ncu-regex $(KERNEL)) || exit 1; \
	$(NCU) --clock-control none --set full -k "regex:$$regex" --launch-count 1 -f -o $(NCU_DIR)/$(NCU_TAG) \
	  $(BUILD)/maxgemm run --kernel $(KERNEL) --precision $(PREC) --max-dim $(MAXDIM) --iters 1 --warmup 0 --no-shortcut
	$(NCU) --import $(NCU_DIR)/$(NCU_TAG).ncu-rep --csv --page raw --metrics $(NCU_METRICS) > $(NCU_DIR)/$(NCU_TAG).csv
	tools/ncu_check_metrics.sh $(NCU_DIR)/$(NCU_TAG).csv $(NCU_METRICS)
	@echo "ncu: $(NCU_DIR)/$(NCU_TAG).ncu-rep, $(NCU_DIR)/$(NCU_TAG).csv"

# The ptxas tables of notes/ptxas.md (registers, smem, stack, spills per kernel), from the logs the build keeps.
ptxas-report: $(BUILD)/libmaxgemm.a
	@tools/ptxas_report.sh $(BUILD)/obj > $(BUILD)/ptxas_report.md && \
	awk -v f=$(BUILD)/ptxas_report.md '/^<!-- ptxas:begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next } \
	     /^<!-- ptxas:end -->/ { skip = 0 } !skip' notes/ptxas.md > notes/ptxas.md.tmp && mv notes/ptxas.md.tmp notes/ptxas.md && \
	echo "ptxas-report: notes/ptxas.md updated from $(BUILD)/obj/*.ptxas.txt"

# Nsight Systems timeline of one forward (NVTX ranges: forward, classify, GEMM+epilogue, finalize) -> build/nsys/.
NSYS       ?= nsys
nsys: $(BUILD)/maxgemm
	@command -v $(NSYS) > /dev/null || { echo "nsys: $(NSYS) not found (Nsight Systems; set NSYS=/path/to/nsys)"; exit 1; }
	mkdir -p $(BUILD)/nsys
	$(NSYS) profile --trace=cuda,nvtx --force-overwrite true -o $(BUILD)/nsys/forward_$(PREC)_md$(MAXDIM) \
	  $(BUILD)/maxgemm run --kernel $(or $(KERNEL),auto) --precision $(PREC) --max-dim $(MAXDIM) --iters 5 --warmup 1
	$(NSYS) stats --report nvtx_sum,cuda_gpu_kern_sum $(BUILD)/nsys/forward_$(PREC)_md$(MAXDIM).nsys-rep

# SASS of kernel KERNEL's object (build/obj/NN_*.cu.o) into $(SASS_DIR) (default $(BUILD)/sass), and its HGMMA / HMMA /
# FFMA counts per function into notes/sass/kN.counts (the committed summary).
sass: $(BUILD)/libmaxgemm.a
	@test -n "$(KERNEL)" || { echo "usage: make sass KERNEL=N [SASS_DIR=dir]"; exit 2; }
	@command -v $(CUOBJDUMP) > /dev/null || { echo "sass: $(CUOBJDUMP) not found (set CUOBJDUMP=/path/to/cuobjdump)"; exit 1; }
	@obj=$$(ls $(BUILD)/obj/$$(printf '%02d' $(KERNEL))_*.cu.o 2>/dev/null | head -1); \
	test -n "$$obj" || { echo "sass: no $(BUILD)/obj/NN_*.cu.o for kernel $(KERNEL)"; exit 1; }; \
	mkdir -p $(SASS_DIR) notes/sass && $(CUOBJDUMP) -sass $$obj > $(SASS_DIR)/k$(KERNEL).sass.tmp && \
	mv $(SASS_DIR)/k$(KERNEL).sass.tmp $(SASS_DIR)/k$(KERNEL).sass && echo "sass: $$obj -> $(SASS_DIR)/k$(KERNEL).sass" && \
	tools/sass_counts.sh $(SASS_DIR)/k$(KERNEL).sass | tee notes/sass/k$(KERNEL).counts

# ---- sanitizers and fuzzing (CI: .ci/run) -------------------------------------------------------------------------
# `make asan`: the C sources and tests rebuilt with gcc -fsanitize=address,undefined (the .cu objects unchanged),
# linked from the objects themselves (not the archive, so every kernel the registry names is linked), then the CPU
# suites run (suites named gpu_* are left out by the filter; run them with ASAN_FILTER='*/*' on a GPU host).
# `make fuzz`: libFuzzer (clang) on the tile_configs, CLI, benchmark-matrix and dispatch-table parsers, FUZZ_TIME
# seconds each, from the committed seed corpora in fuzz/corpus/ (new inputs go to $(BUILD)/fuzz/, the committed corpus is left alone).
.PHONY: asan fuzz
ASAN_FLAGS  ?= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_FILTER ?= !(gpu_*)/*
ASAN_OBJ    := $(patsubst src/%.c,$(BUILD)/asan/%.o,$(LIB_C)) $(BUILD)/asan/mg_tiles.o $(BUILD)/asan/dispatch_table.o \
               $(patsubst test/%.c,$(BUILD)/asan/test/%.o,$(TEST_SRC)) $(patsubst kernels/%.cu,$(BUILD)/obj/%.cu.o,$(LIB_CU)) \
               $(BUILD)/asan/bench_matrix.o
$(BUILD)/asan $(BUILD)/asan/test $(BUILD)/fuzz:
	mkdir -p $@
$(BUILD)/asan/%.o: src/%.c $(HEADERS) | $(BUILD)/asan
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -c -o $@ $<
$(BUILD)/asan/mg_tiles.o: $(BUILD)/gen/mg_tiles.c $(BUILD)/gen/mg_tiles.h | $(BUILD)/asan
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -c -o $@ $<
$(BUILD)/asan/dispatch_table.o: $(BUILD)/gen/dispatch_table.c $(HEADERS) | $(BUILD)/asan
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -c -o $@ $<
$(BUILD)/asan/test/%.o: test/%.c $(HEADERS) bench/matrix.h | $(BUILD)/asan/test
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -Itest -Ibench -c -o $@ $<
$(BUILD)/asan/bench_matrix.o: bench/matrix.c bench/matrix.h $(HEADERS) | $(BUILD)/asan
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -Ibench -c -o $@ $<
$(BUILD)/asan/test_maxgemm: $(ASAN_OBJ)
	$(CC) $(ASAN_FLAGS) -o $@ $^ -lcriterion $(LDLIBS)
# protect_shadow_gap=0: the CUDA driver maps memory where ASan's shadow gap would be (GPU hosts).
asan: $(BUILD)/asan/test_maxgemm
	ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(BUILD)/asan/test_maxgemm --jobs 1 --filter '$(ASAN_FILTER)'

FUZZ_CC    ?= clang
FUZZ_TIME  ?= 30
FUZZ_FLAGS ?= -g -O1 -std=c11 -D_GNU_SOURCE -Isrc -I$(BUILD)/gen -I$(CUDA_HOME)/include \
              -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
$(BUILD)/fuzz/fuzz_tile_config: fuzz/fuzz_tile_config.c src/tile_config.c src/tile_config.h | $(BUILD)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -DMG_TILE_PARSER_ONLY -o $@ fuzz/fuzz_tile_config.c src/tile_config.c
# The CLI parser needs the registry, mg_precision_parse and mg_set_error: instrumented cli_args.c and registry.c,
# the rest from the library (no CUDA call is made while fuzzing).
$(BUILD)/fuzz/fuzz_cli_args: fuzz/fuzz_cli_args.c src/cli_args.c src/registry.c $(HEADERS) $(BUILD)/libmaxgemm.a | $(BUILD)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ fuzz/fuzz_cli_args.c src/cli_args.c src/registry.c $(BUILD)/libmaxgemm.a $(LDLIBS)
# the benchmark matrix parser (bench/matrix.c) stands alone: no CUDA, no registry.
$(BUILD)/fuzz/fuzz_matrix: fuzz/fuzz_matrix.c bench/matrix.c bench/matrix.h src/optkeys.c src/optkeys.h | $(BUILD)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -Ibench -o $@ fuzz/fuzz_matrix.c bench/matrix.c src/optkeys.c
# the dispatch-table parser (src/dispatch.c) with the option vocabulary (src/optkeys.c): the generator's and
# mg_dispatch_load's
$(BUILD)/fuzz/fuzz_dispatch: fuzz/fuzz_dispatch.c src/dispatch.c src/dispatch.h src/optkeys.c src/optkeys.h | $(BUILD)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -DMG_DISPATCH_PARSER_ONLY -o $@ fuzz/fuzz_dispatch.c src/dispatch.c src/optkeys.c
fuzz: $(BUILD)/fuzz/fuzz_tile_config $(BUILD)/fuzz/fuzz_cli_args $(BUILD)/fuzz/fuzz_matrix $(BUILD)/fuzz/fuzz_dispatch
	mkdir -p $(BUILD)/fuzz/corpus_tile_config $(BUILD)/fuzz/corpus_cli_args $(BUILD)/fuzz/corpus_matrix \
	  $(BUILD)/fuzz/corpus_dispatch
	@for t in tile_config:4096 cli_args:1024 matrix:8192 dispatch:8192; do name=$${t%%:*}; \
	  echo "fuzz_$$name: $(FUZZ_TIME) s (log: $(BUILD)/fuzz/$$name.log)"; \
	  $(BUILD)/fuzz/fuzz_$$name -max_total_time=$(FUZZ_TIME) -max_len=$${t#*:} -dict=fuzz/$$name.dict \
	    -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus_$$name fuzz/corpus/$$name > $(BUILD)/fuzz/$$name.log 2>&1 \
	    || { tail -n 60 $(BUILD)/fuzz/$$name.log; echo "fuzz_$$name FAILED: reproduce with $(BUILD)/fuzz/fuzz_$$name $(BUILD)/fuzz/crash-*"; exit 1; }; \
	  grep -E '^Done [0-9]+ runs' $(BUILD)/fuzz/$$name.log; done
