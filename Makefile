# gadgetd — build, run and test. `make help` lists the targets.
#
# Everything a target needs beyond Go is installed by scripts/deps.sh (Debian
# packages when run as root; otherwise it says precisely what is missing).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
# Targets run their steps in order even under `make -j`.
.NOTPARALLEL:

GO ?= go
GOBIN_DIR := $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
# capnp finds the capnpc-go plugin on PATH; gotestsum lives there too.
export PATH := $(GOBIN_DIR):$(PATH)

BIN := bin/gadgetd
EXAMPLES := $(patsubst %/blueprint.json,%,$(wildcard examples/*/blueprint.json))

# --- test settings (override on the command line: make test RACE=0) --------
#
# RACE=1 runs the tests under the race detector. gadgetd is concurrent at its
# core (RPC connections, per-gadget actors, eviction, revocation), so data races
# are the bugs we most need to catch, and CI runs with it on. It costs: on 2
# cores, with another CPU-bound process beside it, the whole of make test took
# 15 to 18 min with -race and about 3 without (most of it is wazero compiling
# guests in race-instrumented code). `make test RACE=0` for a quick local run.
RACE ?= 1
# -count=1: some tests build and run binaries (interop builds cmd/gadgetd and a
# C++ client); go test cannot see those inputs, so a cached "ok" could hide a
# regression. Builds stay cached; only test results are not reused.
# -timeout is per package: the server and wasmhost packages compile many
# guests, which under -race on a busy 2-core machine took 10 minutes each;
# a hung test still ends the run, with its stack.
TESTFLAGS ?= -count=1 -timeout 25m
# Flags for scripts/deps.sh, e.g. DEPS_FLAGS=--check to install nothing.
DEPS_FLAGS ?=
TEST_JSON := bin/test-results.json

GOTEST_FLAGS := $(TESTFLAGS) $(if $(filter 1,$(RACE)),-race,)

# --- bench/run settings ------------------------------------------------------
BENCHTIME ?= 1s
COUNT ?= 5
RUN_FLAGS ?=

.PHONY: help
help:
	@echo "make run           build gadgetd and the examples, start gadgetd serve --dev (./gadgetd-data;"
	@echo "                   HTTP 127.0.0.1:7070, Cap'n Proto 127.0.0.1:7071; RUN_FLAGS=\"...\" adds serve flags)"
	@echo "make build         build $(BIN)"
	@echo "make examples      build the examples/*/blueprint.json that changed (guest wasm + schema)"
	@echo "make test          deps, schema-check, js-check, gofmt, vet, then every test (RACE=0 to skip -race)"
	@echo "make deps          install what the build and the tests need (scripts/deps.sh)"
	@echo "make schema        regenerate the committed Go code from every .capnp with \$$Go.import"
	@echo "make schema-check  fail if the committed generated code is stale"
	@echo "make js            rebuild the JS client's bindings and the bundles in web/static (needs node, npm; see web/js)"
	@echo "make js-check      fail if the committed JS bindings or bundles are stale"
	@echo "make fmt           gofmt -w every Go file"
	@echo "make interop       only the C++ interop test"
	@echo "make bench         run the benchmarks and compare with their targets (docs/BENCHMARKS.md)"
	@echo "make idle-rss      200 clients against gadgetd serve --dev, then its RSS as they leave (docs/BENCHMARKS.md)"
	@echo "make ws-load       1,000 browser shell sessions over websocket for 60 s: errors, latency, RSS (make bench runs it)"
	@echo "make soak          fuzz the frame decoder, the guarded RPC transport and the module checker (FUZZTIME=5m each),"
	@echo "                   then stress the server with random pipelined call graphs (STRESSTIME=10m)"
	@echo "make clean         remove build outputs (keeps ./gadgetd-data)"

.PHONY: deps
deps:
	@scripts/deps.sh $(DEPS_FLAGS)

.PHONY: build
build:
	$(GO) build -o $(BIN) ./cmd/gadgetd

# make run needs only what running needs: Go, and capnp and capnpc-go for
# blueprint build (scripts/deps.sh --run); none of the test tools.
.PHONY: run-deps
run-deps:
	@scripts/deps.sh --run

# The examples are built here and only here (serve --dev installs them as
# built), and only when they changed: an example's outputs depend on every
# file of this repository's packages it is built from (its own, the guest
# SDK, the schema: go list -deps) and on go.mod and go.sum. Secondary
# expansion runs go list only for the examples make considers. An example
# that does not build loses its outputs, so serve --dev skips it rather than
# serve a stale one, and the others still run.
example_inputs = $(filter-out %/gadget.wasm %/schema.bin,$(wildcard $(addsuffix /*, \
	$(shell GOOS=wasip1 GOARCH=wasm $(GO) list -deps -f '{{if and .Module .Module.Main}}{{.Dir}}{{end}}' ./$(1)))))

.SECONDEXPANSION:
examples/%/gadget.wasm examples/%/schema.bin: $$(call example_inputs,examples/$$*) go.mod go.sum | run-deps build
	@echo "gadgetd blueprint build examples/$*"
	@if ./$(BIN) blueprint build examples/$* >/dev/null; then \
		touch examples/$*/gadget.wasm examples/$*/schema.bin; \
	else \
		rm -f examples/$*/gadget.wasm examples/$*/schema.bin; \
		echo "make: example $* does not build; serve --dev will skip it" >&2; \
	fi

.PHONY: examples
examples: $(addsuffix /gadget.wasm,$(EXAMPLES))
	@if [ -z "$(EXAMPLES)" ]; then echo "no examples/*/blueprint.json found" >&2; exit 1; fi

# RUN_FLAGS adds flags to serve: make run RUN_FLAGS="--config gadgetd.toml"
.PHONY: run
run: run-deps build examples
	./$(BIN) serve --dev $(RUN_FLAGS)

.PHONY: schema
schema: deps
	@scripts/schema.sh gen

.PHONY: schema-check
schema-check: deps
	@scripts/schema.sh check

# The JS client (web/js): capnp-es bindings of the schema and the esbuild
# bundles the binary embeds (web/static). Both are committed, so make run
# needs no npm; make test checks that they match their sources.
.PHONY: js
js: deps
	@web/js/build.sh build

.PHONY: js-check
js-check: deps
	@web/js/build.sh check

.PHONY: fmt
fmt:
	@scripts/gofiles.sh | xargs -r gofmt -w

.PHONY: fmt-check
fmt-check:
	@files=$$(scripts/gofiles.sh | xargs -r gofmt -l); \
	if [ -n "$$files" ]; then \
		echo "these files are not gofmt-formatted (run make fmt):" >&2; \
		echo "$$files" | sed 's/^/    /' >&2; \
		exit 1; \
	fi; \
	echo "fmt-check: all Go files are gofmt-formatted"

.PHONY: vet
vet:
	$(GO) build ./...
	$(GO) vet ./...
	@pkgs=$$(scripts/wasmpkgs.sh | tr "\n" " "); \
	if [ -n "$$pkgs" ]; then \
		echo "GOOS=wasip1 GOARCH=wasm $(GO) vet $$pkgs"; \
		GOOS=wasip1 GOARCH=wasm $(GO) vet $$pkgs; \
	fi

# The test run itself. gotestsum prints one line per package, then the full
# output of every failed test, and closes with "DONE N tests, ...". The raw go
# test JSON is kept in $(TEST_JSON); the slowest tests:
#   gotestsum tool slowest --jsonfile bin/test-results.json --threshold 5s
.PHONY: gotest
gotest: deps
	@mkdir -p bin
	gotestsum --format pkgname --format-icons text --format-hide-empty-pkg \
		--jsonfile $(TEST_JSON) -- $(GOTEST_FLAGS) ./...

.PHONY: test
test: deps schema-check js-check fmt-check vet gotest

.PHONY: interop
interop: deps
	$(GO) test -count=1 -v -timeout 10m ./interop/

# Benchmarks, each figure printed next to its target or baseline (the targets
# are in docs/BENCHMARKS.md)
# (medians of COUNT runs). The raw output is kept in bin/bench.txt for
# benchstat. Then make ws-load, below. make bench COUNT=3 BENCHTIME=2s
.PHONY: bench
bench:
	@mkdir -p bin
	$(GO) run ./internal/cmd/benchreport -count $(COUNT) -benchtime $(BENCHTIME) | tee bin/bench.txt
	$(MAKE) --no-print-directory ws-load

# How much memory the server gives back once its clients leave: starts
# bin/gadgetd serve --dev on a temporary data directory and free loopback
# ports, runs 200 concurrent counter clients (some watching), and prints its
# RSS before, at the peak, and 0 s to 2 min after they left. A measurement,
# not a test: it asserts nothing. make idle-rss IDLE_RSS_FLAGS="-clients 500"
IDLE_RSS_FLAGS ?=
.PHONY: idle-rss
idle-rss: examples
	$(GO) run ./internal/cmd/idlerss -gadgetd $(BIN) $(IDLE_RSS_FLAGS)

# The load browser shells put on the server over websocket (issue 9): starts
# bin/gadgetd serve --dev on a temporary data directory and free loopback
# ports, opens 1,000 shell sessions at once (each a /ws and a /ws/frame
# websocket: login, a counter opened, a frame ticket), makes a call on each
# every 2 s for 60 s (some watch), and prints sessions held, calls, errors,
# latency p50/p99 and the server's RSS before, at the peak and 0/30/60 s
# after they closed (also kept in bin/ws-load.txt). It fails only on an
# error; make test runs a short one (internal/cmd/wsload's tests).
# make ws-load WS_LOAD_FLAGS="-sessions 2000 -hold 2m"
WS_LOAD_FLAGS ?=
.PHONY: ws-load
ws-load: build examples
	@mkdir -p bin
	$(GO) run ./internal/cmd/wsload -gadgetd $(BIN) $(WS_LOAD_FLAGS) | tee bin/ws-load.txt

# Longer runs than make test affords. make test replays each fuzz target's
# seeds and saved crashers; soak fuzzes for FUZZTIME each. make test runs the
# randomized stress test of the server for a few rounds; soak runs it for
# STRESSTIME (a failure prints the seed: GADGETD_STRESS_SEED=N replays it).
FUZZTIME ?= 5m
STRESSTIME ?= 10m
STRESS_TIMEOUT ?= 30m
.PHONY: soak
soak:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeNeverPanics$$' -fuzztime $(FUZZTIME) ./internal/frame/
	$(GO) test -run '^$$' -fuzz '^FuzzGuardedConnSurvivesArbitraryBytes$$' -fuzztime $(FUZZTIME) ./internal/rpcguard/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckNeverPanics$$' -fuzztime $(FUZZTIME) ./wasmhost/internal/wasmcheck/
	GADGETD_STRESS_DURATION=$(STRESSTIME) $(GO) test -count=1 -v -run '^TestRandomPipelinedCallGraphsNeverKillTheServer$$' -timeout $(STRESS_TIMEOUT) ./server/

.PHONY: clean
clean:
	rm -rf bin
	rm -f $(addsuffix /gadget.wasm,$(EXAMPLES)) $(addsuffix /schema.bin,$(EXAMPLES))
