# gnnrun: build, test, demo and benchmarks. Works as root (mpirun needs
# --allow-run-as-root) and on machines with fewer cores than ranks
# (--oversubscribe).
SHELL := /bin/bash
GO ?= go
BIN := bin/gnnrun
NP ?= 4
MPIRUN_FLAGS := --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root,)
MPIRUN := mpirun $(MPIRUN_FLAGS)
# The trainers' Python: Debian's, which sees the python3-* packages (a
# python3 earlier on PATH, e.g. pyenv's, may not).
PYTHON ?= /usr/bin/python3
# The compiler of the CUDA kernels' PTX and CPU harnesses (Debian's).
CLANG ?= clang-16
export OMPI_MCA_btl ?= self,vader,tcp

.PHONY: all deps kernels build build-nompi build-nompi-cuda gpu-check-build gpu-bundle gpu-check test unit test-launchers demo bench bench-alltoall bench-pack bench-ingest bench-partition bench-dispatch bench-sample bench-loader bench-train bench-accuracy lint clean

all: build

# deps installs OpenMPI, CPU PyTorch, NumPy and SciPy for the trainers
# (Debian's python3-torch, python3-numpy, python3-scipy, which belong to
# /usr/bin/python3), and clang-16 with its sanitizer runtime for the CUDA
# kernels' PTX and CPU harnesses, from Debian's packages when they are
# missing.
deps:
	@missing=""; \
	command -v $(CLANG) >/dev/null || missing="$$missing clang-16"; \
	exe=$$(mktemp); \
	echo 'int main(void) { return 0; }' | $(CLANG) -x c -fsanitize=address,undefined -o $$exe - >/dev/null 2>&1 || \
		missing="$$missing libclang-rt-16-dev"; \
	rm -f $$exe; \
	command -v mpirun >/dev/null || missing="$$missing openmpi-bin"; \
	pkg-config --exists ompi-c 2>/dev/null || missing="$$missing libopenmpi-dev pkg-config"; \
	$(PYTHON) -c 'import numpy' 2>/dev/null || missing="$$missing python3-numpy"; \
	$(PYTHON) -c 'import scipy' 2>/dev/null || missing="$$missing python3-scipy"; \
	$(PYTHON) -c 'import torch' 2>/dev/null || missing="$$missing python3-torch"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# kernels compiles every cuda/kernels/*.cu to PTX for sm_70, sm_80 and
# sm_90 with Debian's clang-16 (no CUDA SDK: compat.h gives what the
# kernels take from CUDA) into cuda/kernels/ptx, which is checked in and
# embedded in gnnrun; the driver JIT-compiles a device's PTX at open. It
# always rebuilds (checkouts do not keep times, so make could not tell a
# stale PTX) and removes the PTX of sources that are gone. The output is
# deterministic: CI rebuilds it and fails when it differs from the commit.
KERNEL_ARCHS := 70 80 90
kernels:
	@command -v $(CLANG) >/dev/null || { echo "kernels: $(CLANG) is not installed (make deps)"; exit 1; }
	@mkdir -p cuda/kernels/ptx
	@for f in cuda/kernels/ptx/*.ptx; do \
		[ -e "$$f" ] || continue; \
		src=cuda/kernels/$$(basename "$$f" | sed 's/\.sm_[0-9]*\.ptx$$//').cu; \
		[ -f "$$src" ] || { echo "rm $$f ($$src is gone)"; rm -f "$$f"; }; \
	done
	@for src in cuda/kernels/*.cu; do \
		for arch in $(KERNEL_ARCHS); do \
			out=cuda/kernels/ptx/$$(basename "$$src" .cu).sm_$$arch.ptx; \
			echo "$(CLANG) $$src -> $$out"; \
			$(CLANG) -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_$$arch -O3 -S \
				-I cuda/kernels -o "$$out" "$$src" || exit 1; \
		done; \
	done

build: deps
	$(GO) build -o $(BIN) ./cmd/gnnrun

# build-nompi builds gnnrun without MPI (tag nompi) for machines that have no
# MPI library: a static binary (no cgo) that runs as a world of one rank and
# refuses to start as one of several ranks under mpirun or srun.
build-nompi:
	CGO_ENABLED=0 $(GO) build -tags nompi -o bin/gnnrun-nompi ./cmd/gnnrun

# build-nompi-cuda builds gnnrun without MPI but with cgo, so that it can
# load the NVIDIA driver at run time: for GPU machines without an MPI
# library (it links only the C library, glibc 2.34 or later).
build-nompi-cuda:
	CGO_ENABLED=1 $(GO) build -tags nompi -o bin/gnnrun-nompi-cuda ./cmd/gnnrun

# gpu-check-build builds what make gpu-check runs, for a GPU machine that
# may have no Go and no MPI (copy the repository with its bin/ there):
# gnnrun without MPI but with cgo (bin/gnnrun-nompi-cuda, as
# build-nompi-cuda), bench/gpucheck, and the test binaries of ./cuda and
# ./sampler, whose GPU tests it runs.
gpu-check-build:
	CGO_ENABLED=1 $(GO) build -tags nompi -o bin/gnnrun-nompi-cuda ./cmd/gnnrun
	CGO_ENABLED=1 $(GO) build -tags nompi -o bin/gpucheck ./bench/gpucheck
	CGO_ENABLED=1 $(GO) test -c -tags nompi -o bin/cuda.test ./cuda
	CGO_ENABLED=1 $(GO) test -c -tags nompi -o bin/sampler.test ./sampler

# gpu-bundle packs, for a GPU machine with no Go, what make gpu-check and
# bench/gpuhost.sh run there (gpu-check-build's binaries and the MPI
# build, stripped) into bin/gpu-bundle.txz, about 20 MB; there, from the
# repository's root: tar -xJf bin/gpu-bundle.txz, then make gpu-check and
# bench/gpuhost.sh OUT.
gpu-bundle:
	$(MAKE) --no-print-directory gpu-check-build GOFLAGS='-ldflags=-s -w'
	CGO_ENABLED=1 $(GO) build -ldflags='-s -w' -o bin/gnnrun ./cmd/gnnrun
	tar -cJf bin/gpu-bundle.txz bin/gnnrun bin/gnnrun-nompi-cuda bin/gpucheck bin/cuda.test bin/sampler.test

# gpu-check proves gnnrun on a GPU node (bench/gpucheck): the GPU tests, the
# gather's bandwidth, loader --device cuda --verify, the trainer's GPU tensor
# and GraphSAGE, GPU sampling; bench/results/gpu-check.{json,md}. It builds
# first where Go is, else runs the binaries in bin/ as they are. Without a
# GPU it stops at once, saying how to run it on one. GPU_CHECK_FLAGS adds
# bin/gpucheck's flags (e.g. --scale 18, --steps 2,4). The trainers' Python is
# PYTHON, or the python3 on PATH where PYTHON lacks PyTorch and NumPy and it
# has them (GPU hosts' PyTorch is often not Debian's).
GPU_CHECK_FLAGS ?=
gpu-check:
	@if command -v $(GO) >/dev/null; then \
		$(MAKE) --no-print-directory gpu-check-build || exit 1; \
	else \
		for b in bin/gpucheck bin/gnnrun-nompi-cuda; do \
			[ -x $$b ] || { echo "gpu-check: $$b is missing and there is no Go here ($(GO)) to build it: run make gpu-check-build where Go is and copy bin/ with the repository"; exit 1; }; \
		done; \
		echo "gpu-check: no Go here: running the binaries in bin/ as they are"; \
	fi
	@py=$(PYTHON); \
	if ! $$py -c 'import torch, numpy' 2>/dev/null && python3 -c 'import torch, numpy' 2>/dev/null; then \
		py=$$(command -v python3); echo "gpu-check: $(PYTHON) lacks PyTorch or NumPy; the python3 on PATH ($$py) has them: using it"; \
	fi; \
	echo bin/gpucheck --gnnrun bin/gnnrun-nompi-cuda --python $$py --out bench/results/gpu-check $(GPU_CHECK_FLAGS); \
	bin/gpucheck --gnnrun bin/gnnrun-nompi-cuda --python $$py --out bench/results/gpu-check $(GPU_CHECK_FLAGS)

# test runs the unit tests, then the integration tests that run the built
# binary under mpirun at 1, 2 and 4 ranks (and the build without MPI against
# it), then the world of one's own tests in the build without MPI. The CPU
# harnesses of the CUDA kernels fail, rather than skip, without clang-16.
test: build
	GNNRUN_REQUIRE_HARNESS=1 $(GO) test -count=1 -timeout 30m ./...
	GNNRUN_REQUIRE_HARNESS=1 $(GO) test -count=1 -tags nompi ./rank ./collective

unit:
	$(GO) test -count=1 -short ./...

# test-launchers runs only the real-launcher tests (root; they skip elsewhere):
# a one-node Slurm running launch/gnnrun.sbatch with mpirun and with srun
# --mpi=pmix, and mpirun --hostfile over three network-namespace hosts.
test-launchers: build
	$(GO) test -count=1 -timeout 15m -run 'TestLaunchers' -v ./cmd/gnnrun

# demo runs the main job on an embedded default, on NP ranks: an R-MAT
# graph of 2^16 nodes with features, labels (4 classes planted as
# communities) and masks is generated, checked,
# partitioned into NP parts balanced on nodes, training nodes and edges,
# dispatched into partition directories, verified, and served: every rank
# pulls random feature rows from all partitions over both transports, then
# samples node-classification and link-prediction mini-batches, then runs
# the mini-batch pipeline (sample, gather, device copy with the reuse
# cache) with a stand-in trainer, checking every batch's device rows, and
# trains GraphSAGE on it with PyTorch, one trainer per rank.
DEMO := out/demo
demo: build
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(MPIRUN) -np $(NP) $(BIN) info
	$(MPIRUN) -np $(NP) $(BIN) selftest
	$(MPIRUN) -np $(NP) $(BIN) gen --scale 16 --feat-dim 32 --classes 4 --planted 0.8 --seed 1 --out $(DEMO)/graph
	$(MPIRUN) -np $(NP) $(BIN) ingest-check --in $(DEMO)/graph
	$(MPIRUN) -np $(NP) $(BIN) partition --in $(DEMO)/graph --parts $(NP) --balance nodes,train,edges \
		--out $(DEMO)/assignment --report $(DEMO)/partition-report.json
	$(MPIRUN) -np $(NP) $(BIN) dispatch --in $(DEMO)/graph --assignment $(DEMO)/assignment --out $(DEMO)/parts
	$(MPIRUN) -np $(NP) $(BIN) inspect $(DEMO)/parts --in $(DEMO)/graph
	$(MPIRUN) -np $(NP) $(BIN) fetch $(DEMO)/parts --in $(DEMO)/graph --rows 100000
	$(MPIRUN) -np $(NP) $(BIN) sample $(DEMO)/parts --fanouts 10,5 --batch-size 512 --epochs 2 --transport alltoall
	$(MPIRUN) -np $(NP) $(BIN) sample $(DEMO)/parts --fanouts 10,5 --batch-size 512 --epochs 1 --transport rma
	$(MPIRUN) -np $(NP) $(BIN) sample $(DEMO)/parts --fanouts 10,5 --batch-size 2048 --epochs 1 --transport alltoall \
		--task link --negatives 4 --exclude reverse
	$(MPIRUN) -np $(NP) $(BIN) loader $(DEMO)/parts --fanouts 10,5 --batch-size 512 --epochs 2 --compute-ms 5 --verify \
		--report $(DEMO)/loader-report.json
	$(MPIRUN) -np $(NP) $(BIN) train $(DEMO)/parts --fanouts 10,5 --batch-size 512 --epochs 3 --tag-output \
		--report $(DEMO)/train-report.json -- $(PYTHON) examples/graphsage.py --hidden 64
	@echo "demo: outputs in $(DEMO)/"

# bench runs every benchmark program; results go to bench/results/. It
# takes an hour or more on 2 cores; the bench-* targets run one each.
# gpmetis (Debian package metis) is installed for the partitioner's.
bench: bench-alltoall bench-pack bench-ingest bench-partition bench-dispatch bench-sample bench-loader bench-train bench-accuracy

bench-alltoall: build
	$(GO) build -o bin/bench-alltoall ./bench/alltoall
	rm -f bench/results/alltoall.csv
	$(MPIRUN) -np 2 bin/bench-alltoall -out bench/results/alltoall.csv
	$(MPIRUN) -np 4 bin/bench-alltoall -out bench/results/alltoall.csv

bench-pack:
	$(GO) run ./bench/pack -data pack/testdata -out bench/results -reps 3

bench-ingest: build
	$(GO) run ./bench/ingest --scale 22

GRAPHS ?= ../shared/data/graphs
bench-partition: build
	command -v gpmetis >/dev/null || { sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get install -y -qq --no-install-recommends metis >/dev/null; }
	$(GO) run ./bench/partition -data $(GRAPHS) -graphs 4elt,finan512,wing,bcsstk33 -seeds 3 -out bench/results/partition-meshes
	$(GO) run ./bench/partition -graphs rmat18,rmat20 -seeds 1 -out bench/results/partition-rmat
	$(GO) run ./bench/partition -graphs rmat20,rmat20p -k 4,64 -np 1,2 -rounds 3 -out bench/results/partition-planted

bench-dispatch: build
	$(GO) run ./bench/dispatch --scale 20,22

# bench-sample: neighbour sampling of R-MAT scale 20 and 22 and of the
# largest real graph in $(DATASETS) (soc-Slashdot0902) in K = 4 partitions
# at 1, 2 and 4 ranks, node and link tasks, both transports, beside the
# memory system's random-access rate; bench/results/sample.{md,json,svg}.
bench-sample: build
	$(GO) run ./bench/sample --scale 20,22 --real slashdot=$(DATASETS)/snap-soc-slashdot0902/soc-Slashdot0902.txt.gz

# bench-loader: the mini-batch pipeline on R-MAT scale 20 and 22 with 128
# features in K = 4 partitions at 1, 2 and 4 ranks: generation time, stages
# alone, the trainer's wait, the device cache; bench/results/loader.{md,json,svg}.
bench-loader: build
	$(GO) run ./bench/loader --scale 20,22

# bench-train: the hand-off to the trainer against a plain memcpy of the same
# bytes, and graphsage.py's data wait on R-MAT scale 20 with 128 features at
# 2 ranks; bench/results/train.{md,json}.
bench-train: build deps
	$(GO) run ./bench/train --scale 20 --np 2 --python $(PYTHON)

# bench-accuracy: GraphSAGE trained on gnnrun's batches over Cora, CiteSeer,
# Tolokers and Squirrel (../shared/data/datasets), 5 seeds at 1 and 4 ranks;
# bench/results/accuracy.{md,json,svg}. About an hour on 2 cores.
DATASETS ?= ../shared/data/datasets
bench-accuracy: build deps
	$(GO) run ./bench/accuracy --data $(DATASETS) --python $(PYTHON)

# lint fails on unformatted code, on go vet's findings, when go mod tidy
# would change go.mod or go.sum (it prints the diff), and on binaries or
# files over 1 MiB in git, stray binaries in the tree, and main packages
# whose build output .gitignore misses (ci/tracked-files.sh).
lint:
	@ci/tracked-files.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags nompi ./...
	$(GO) mod tidy -diff

clean:
	rm -rf bin
