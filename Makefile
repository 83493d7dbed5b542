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

.PHONY: all deps build test unit integration demo bench lint clean

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

demo: build
	$(MPIRUN) -np $(NP) $(BIN) info
	$(MPIRUN) -np $(NP) $(BIN) selftest

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./collective/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin
