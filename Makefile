# Lookout. `make run` starts a dev node, `make test` runs every test.
GO      ?= go
TOOLS   := $(CURDIR)/.tools/bin
export PATH := $(TOOLS):$(PATH)

# Code generators, pinned; installed into .tools/bin by `go install`.
BUF_VERSION                   := v1.75.0
PROTOC_GEN_GO_VERSION         := v1.36.12
PROTOC_GEN_CONNECT_GO_VERSION := v1.21.1

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X lookout/internal/cli.Version=$(VERSION)

.PHONY: build run test chromium screenshots lint vet fmt-check generate generate-check tools tzdata bench-raft bench-ingest bench-manage bench-panel bench-engine bench-checks bench-agent bench-fairness bench-scale bench-burst chaos image image-target deploy-test clean

build: ## bin/lookout, static
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/lookout .

run: build ## a single-node dev cluster with a demo account
	bin/lookout control --dev

test: ## every test, with the race detector
	$(GO) test -race -count=1 -timeout 9m ./...

chromium: ## headless Chromium for the panel's browser tests (Debian's package)
	@command -v chromium >/dev/null || (apt-get update && apt-get install -y --no-install-recommends chromium)

screenshots: chromium ## PNGs of the panel's main pages into docs/screenshots (a dev node with demo data)
	LOOKOUT_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestScreenshots$$' ./control/panel/

lint: vet fmt-check generate-check ## go vet, gofmt, and generated code up to date

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^internal/gen/')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

generate: tools ## protobuf and Connect code into internal/gen
	buf lint
	buf generate

tzdata: ## refresh internal/schedule's embedded IANA zone database from the Go toolchain
	cp "$$($(GO) env GOROOT)/lib/time/zoneinfo.zip" internal/schedule/zoneinfo.zip

generate-check: generate
	@if [ -n "$$(git status --porcelain -- internal/gen)" ]; then \
		echo "internal/gen is out of date: run make generate and commit"; \
		git status --porcelain -- internal/gen; exit 1; fi

tools: $(TOOLS)/.buf-$(BUF_VERSION) $(TOOLS)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION) $(TOOLS)/.protoc-gen-connect-go-$(PROTOC_GEN_CONNECT_GO_VERSION)

$(TOOLS)/.buf-$(BUF_VERSION):
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	touch $@

$(TOOLS)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION):
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	touch $@

$(TOOLS)/.protoc-gen-connect-go-$(PROTOC_GEN_CONNECT_GO_VERSION):
	GOBIN=$(TOOLS) $(GO) install connectrpc.com/connect/cmd/protoc-gen-connect-go@$(PROTOC_GEN_CONNECT_GO_VERSION)
	touch $@

bench-raft: ## write throughput of a 3-node cluster and of the FSM apply
	$(GO) test -run '^$$' -bench . -benchtime 3s ./cluster/

NODES ?= 1
RUNS ?= 3
LOAD ?= go
bench-ingest: build ## POST /ping load on NODES=1 (dev node) or NODES=3 (cluster) vs a trivial handler, RUNS times, with medians
	@if [ "$(LOAD)" = wrk ] && ! command -v wrk >/dev/null; then apt-get update -qq && apt-get install -y -qq wrk; fi
	$(GO) run ./internal/bench/ingest -lookout bin/lookout -nodes $(NODES) -runs $(RUNS) -load $(LOAD)

bench-manage: build ## apply, list and export 10,000 monitors on a dev node
	$(GO) run ./internal/bench/manage -lookout bin/lookout

bench-panel: ## the web panel: pages of a list of 10,000 monitors, a monitor's page, in one process
	$(GO) test -run '^$$' -bench 'MonitorList10000|Pages' -benchtime 20x -benchmem ./control/panel/

SCHEDULE ?=
bench-engine: ## the leader's deadline engine over 100,000 ping monitors, in one process (SCHEDULE='* * * * *' or interval: the scheduled comparison)
	$(GO) run ./internal/bench/engine -schedule '$(SCHEDULE)'

bench-checks: build ## 10,000 http_checks every minute on a dev node, then the scheduler in one process
	$(GO) run ./internal/bench/checks -lookout bin/lookout

SHARE ?= 8
bench-fairness: ## one account's 100 checks and 10 channels hanging vs another's check and alerts, in one process (SHARE=0: no per-account share)
	$(GO) run ./internal/bench/fairness -share $(SHARE)

MONITORS ?= 1000000
ACCOUNTS ?= 1000
CHECKS   ?= 10000
bench-scale: build ## MONITORS monitors (ACCOUNTS accounts, CHECKS checks) on 3 nodes of bin/lookout: RSS, disk, restart, catch-up, alert lag of 10,000 deadlines in one second, apply, panel page
	$(GO) run ./internal/bench/scale -lookout bin/lookout -monitors $(MONITORS) -accounts $(ACCOUNTS) -checks $(CHECKS)

BURST ?= 20000
bench-burst: build ## the top of the minute: BURST jobs send run then complete at one instant, on NODES=1 or NODES=3; latency, nothing lost
	$(GO) run ./internal/bench/burst -lookout bin/lookout -nodes $(NODES) -monitors $(BURST)

ROUNDS ?= 4
chaos: build ## fault injection against 3 nodes of bin/lookout: linearizability of the Management API, no lost or doubled pings (docs/reliability.md)
	$(GO) run ./internal/chaos -lookout bin/lookout -rounds $(ROUNDS)

bench-agent: build ## the agent's buffer and local ingest in one process, then 1,000,000 buffered pings drained by bin/lookout agent into a dev node
	$(GO) run ./internal/bench/agent -lookout bin/lookout

image: build ## a FROM-scratch image of bin/lookout (docker build, nothing pulled)
	rm -rf deploy/.build && mkdir -p deploy/.build
	cp bin/lookout deploy/Dockerfile deploy/.build/
	cp /etc/ssl/certs/ca-certificates.crt deploy/.build/
	docker build -t lookout:$(VERSION) -t lookout:latest deploy/.build

image-target: ## the deploy target (deploy/target), a FROM-scratch image for docker-compose.yml
	rm -rf deploy/.build-target && mkdir -p deploy/.build-target
	CGO_ENABLED=0 $(GO) build -trimpath -o deploy/.build-target/target ./deploy/target
	cp deploy/target/Dockerfile deploy/.build-target/
	docker build -t lookout-target:$(VERSION) -t lookout-target:latest deploy/.build-target

# DEPLOY_AGENTS: on (the default) requires the agent steps; auto runs them
# when the image has `lookout agent` and reports them skipped otherwise; off
# skips them.
# DEPLOY_TLS=1 adds docker-compose.tls.yml (certificates by deploy/certs).
DEPLOY_AGENTS ?= on
DEPLOY_TLS    ?=
deploy-test: image image-target ## docker-compose.yml end to end: leader kill, a region cut off, every acknowledged ping stored once (see deploy/README.md)
	command -v docker-compose >/dev/null || (apt-get update && apt-get install -y --no-install-recommends docker-compose)
	$(GO) run ./deploy/deploytest -image lookout:$(VERSION) -target-image lookout-target:$(VERSION) -agents $(DEPLOY_AGENTS) $(if $(DEPLOY_TLS),-tls)

clean:
	rm -rf bin .tools
