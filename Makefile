# gnnrun: build, test, demo and benchmarks. Works as root (mpirun needs
# --allow-run-as-root) and on machines with fewer cores than ranks
# (--oversubscribe).
SHELL := /bin/bash
GO ?= go
BIN := bin/gnnrun
NP ?= 4
MPIRUN_FLAGS := --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root,)
MPIRUN := mpirun $(MPIRUN_FLAGS)
export OMPI_MCA_btl ?= self,vader,tcp

.PHONY: all deps build test unit test-launchers demo bench lint clean

all: build

# deps installs OpenMPI (and the tools the tests and benchmarks use) from
# Debian's packages when they are missing.
deps:
	@missing=""; \
	command -v mpirun >/dev/null || missing="$$missing openmpi-bin"; \
	pkg-config --exists ompi-c 2>/dev/null || missing="$$missing libopenmpi-dev pkg-config"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build: deps
	$(GO) build -o $(BIN) ./cmd/gnnrun

# test runs the unit tests, then the integration tests that run the built
# binary under mpirun at 1, 2 and 4 ranks.
test: build
	$(GO) test -count=1 -timeout 30m ./...

unit:
	$(GO) test -count=1 -short ./...

# test-launchers runs only the real-launcher tests (root; they skip elsewhere):
# a one-node Slurm running launch/gnnrun.sbatch with mpirun and with srun
# --mpi=pmix, and mpirun --hostfile over three network-namespace hosts.
test-launchers: build
	$(GO) test -count=1 -timeout 15m -run 'TestLaunchers' -v ./cmd/gnnrun

# demo runs the main job on an embedded default: an R-MAT graph of 2^14
# nodes with features, labels and masks, generated, checked and partitioned
# into NP parts balanced on nodes, training nodes and edges, on NP ranks.
DEMO := out/demo
demo: build
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(MPIRUN) -np $(NP) $(BIN) info
	$(MPIRUN) -np $(NP) $(BIN) gen --scale 14 --feat-dim 16 --classes 4 --seed 1 --out $(DEMO)/graph
	$(MPIRUN) -np $(NP) $(BIN) ingest-check --in $(DEMO)/graph
	$(MPIRUN) -np $(NP) $(BIN) partition --in $(DEMO)/graph --parts $(NP) --balance nodes,train,edges \
		--out $(DEMO)/assignment --report $(DEMO)/partition-report.json
	$(MPIRUN) -np $(NP) $(BIN) selftest
	@echo "demo: outputs in $(DEMO)/"

# bench runs the benchmark programs; results go to bench/results/.
bench: build
	$(GO) build -o bin/bench-alltoall ./bench/alltoall
	rm -f bench/results/alltoall.csv
	$(MPIRUN) -np 2 bin/bench-alltoall -out bench/results/alltoall.csv
	$(MPIRUN) -np 4 bin/bench-alltoall -out bench/results/alltoall.csv
	$(GO) run ./bench/pack -data pack/testdata -out bench/results -reps 3
	$(GO) run ./bench/ingest --scale 22

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin
