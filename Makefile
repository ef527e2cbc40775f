# perfscen — `make help` lists the targets.
GO        ?= go
BIN       ?= bin/perfscen
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
PERFSCEN  := $(BIN)
FUZZTIME  ?= 10s
# The container image make image builds; perfscen k8s defaults to this
# name for a binary of the same version.
IMAGE     ?= perfscen:$(VERSION)
# staticcheck is pinned by go.mod's tool directive: the module download
# that fetches perfscen's dependencies fetches it, so a clean clone needs
# nothing installed but Go.
STATICCHECK ?= $(GO) tool staticcheck
# Scenarios that start the embedded server need nothing else installed.
EMBEDDED_SCENARIOS := $(shell grep -l '^ *embedded: *true' scenarios/*.yaml 2>/dev/null)

.PHONY: help build deps-test test soundness-sim fmt-check vet tidy-check staticcheck platform-check demo gate baselines bench bench-peers fuzz soak soundness soundness-hog soundness-busy busy-check gate-campaign conformance-llm generate clean image image-bin image-check k8s-check

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 16

build: ## build bin/perfscen
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/perfscen

# What a target needs beyond Go and make, checked and, as root, installed
# with apt-get, in one line (scripts/deps.sh lists the packages by feature).
deps-test:
	@bash scripts/deps.sh test

test: deps-test fmt-check tidy-check vet staticcheck platform-check ## the packages the tests need (scripts/deps.sh), gofmt check, go.mod tidy, go vet, staticcheck, go test -race ./... (cmd/perfscen and internal/engine without -race)
	@# The gate-soundness simulation runs 200 replicates per noise model
	@# here; the full 2000 (the goals' sample size) are `make soundness-sim`.
	@[ -d ../shared/triton ] || [ -n "$$PERFSCEN_TRITON_DIR" ] || echo "SKIP: no ../shared/triton: the tests against the real Triton (test/triton, internal/kinds/tritoncapi) will not run"
	@# A worktree finds the folder beside its main checkout, as the test does.
	@[ -d ../shared/torchserve ] || [ -d "$$(dirname "$$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || echo .)")/../shared/torchserve" ] || echo "SKIP: no ../shared/torchserve: the conformance tests against the real TorchServe 0.12.0 (test/conformance TestRealTorchServe*) will not run"
	@# cmd/perfscen and internal/engine run whole scenarios in
	@# testing/synctest bubbles by the hundred; under -race the Go 1.26
	@# runtime's ThreadSanitizer crashes there now and then (SIGSEGV or
	@# "CHECK failed" when a bubble's timers fire, golang/go#78156; seen
	@# with go1.26.8 and go1.26.11 alike), whatever the test. They run
	@# without the detector; every other package keeps it.
	$(GO) test -race -timeout 15m $$($(GO) list ./... | grep -v -e '/cmd/perfscen$$' -e '/internal/engine$$')
	$(GO) test -timeout 15m ./cmd/perfscen ./internal/engine
	@# Skipped under -race, run here without it: the 64 MiB timing cases
	@# (tens of seconds under the detector, seconds without), the
	@# gate-soundness simulation at 200 replicates (236 s against 24 s) and
	@# the change points' false-alarm simulation at 200 series.
	$(GO) test -timeout 5m -run 'TestWaitIsTheServersTime|TestTimingSplitAnyTensorSize' ./internal/transport ./test/conformance
	$(GO) test -timeout 5m -run 'TestSoundness' ./internal/verdict
	$(GO) test -timeout 5m -run 'TestFalseAlarmRate' ./internal/changepoint
	@# The C API kind's callbacks are C where cgo is on (the default build)
	@# and Go through purego without it: both builds are tested.
	CGO_ENABLED=0 $(GO) test -timeout 5m ./internal/kinds/tritoncapi

soundness-sim: ## the full gate-soundness simulation and the change points' false-alarm rate: 2000 seeded replicates each (CI runs it)
	PERFSCEN_SOUNDNESS=full $(GO) test -count=1 -timeout 20m -run TestSoundness ./internal/verdict
	PERFSCEN_SOUNDNESS=full $(GO) test -count=1 -timeout 30m -run TestFalseAlarmRate -v ./internal/changepoint

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go') | grep -v '\.pb\.go$$' || true); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# go.mod and go.sum must be exactly what `go mod tidy` writes: a direct
# import marked // indirect, or a module nothing imports, fails here.
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }

# perfscen is Linux-only (README, Platform); a build for another OS must
# stop with that reason, not with a missing symbol somewhere.
platform-check:
	@out=$$(GOOS=windows $(GO) build -o /dev/null ./cmd/perfscen 2>&1); \
	if echo "$$out" | grep -q 'builds for Linux only'; then :; else \
	  echo "GOOS=windows build of cmd/perfscen did not stop at the platform guard:"; echo "$$out"; exit 1; fi

staticcheck: ## staticcheck (pinned version) over every package
	$(STATICCHECK) ./...

demo: build ## run the quickstart scenario on the embedded reference server
	$(PERFSCEN) run scenarios/quickstart.yaml

gate: build ## thresholds and same-run comparisons of every embedded-server scenario (GATE_FLAGS adds run flags, GATE_BASELINE=1 the baseline gate; make exits 2 on any failure: scripts/gate.sh passes perfscen's code through)
	PERFSCEN=$(PERFSCEN) bash scripts/gate.sh $(GATE_FLAGS)

BASELINE_RUNS ?= 10
baselines: build ## re-record the embedded-server scenarios' baselines: BASELINE_RUNS calibrated runs each
	@for s in $(EMBEDDED_SCENARIOS); do \
	  echo "== $$s"; \
	  $(PERFSCEN) baseline calibrate --runs $(BASELINE_RUNS) --record --replace $$s || exit $$?; \
	done

bench: ## Go benchmarks (server, client, runner, statistics)
	$(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: ci-lint
ci-lint: ## lint the CI templates in ci/ (actionlint, pinned; shellcheck where installed)
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 ci/github/perfscen.yml ci/github/perfscen-ab.yml

.PHONY: bench-fleet
bench-fleet: ## one process against 1, 2 and 4 agents on this machine: throughput, p50/p99, coordinator cost
	bash scripts/fleet-bench.sh

bench-peers: build ## perfscen vs ghz and hey on the reference server (installs pinned peers)
	bash scripts/bench-peers.sh

fuzz: ## short fuzz pass over every parser ($(FUZZTIME) each)
	bash scripts/fuzz.sh $(FUZZTIME)

soak: build ## concurrency 256 for a fixed time; RSS, goroutines, lost requests
	bash scripts/soak.sh

soundness: build ## real A/A and injected-slowdown runs on the delay model
	bash scripts/soundness.sh

soundness-hog: build ## the same with a CPU hog on one core during the gated runs
	SOUND_HOG=1 bash scripts/soundness.sh

soundness-busy: build ## a shared runner: a neighbour busy 40 ms/100 ms on each core through the history, 60 ms/100 ms plus the hog during the gated runs
	SOUND_NEIGHBOUR=40 SOUND_GATE_NEIGHBOUR=60 SOUND_HOG=1 bash scripts/soundness.sh

gate-campaign: build ## the gate under staged real background work: loads ~5/10/20 × delay/cpu model × history/same-job A/B, and make gate 10 times at ~10 (hours; resumable; CAMPAIGN_DRY=1 prints the plan and its estimated time)
	bash scripts/gate-campaign.sh

busy-check: ## scripts/busy.sh (staged real background work) leaves no process or scratch folder behind on exit, ^C, TERM or SIGKILL, and calls the load settled only when it is
	bash scripts/busy-check.sh

conformance-llm: ## the shipped LLM scenarios against a real server (Ollama v0.17.4, tiny generated model, OLLAMA=binary); docs/llm.md
	bash scripts/conformance-llm.sh

# The image's binary: make build's, stripped of its symbol table and DWARF
# (-s -w: 26 MB instead of 36 MB; panics still print file:line).
image-bin:
	$(GO) build -ldflags "-s -w $(LDFLAGS)" -o bin/image/perfscen ./cmd/perfscen

image: build image-bin ## the container image $(IMAGE) from Containerfile with podman (needs podman, runc where crun cannot start containers, debootstrap and debian-archive-keyring: docs/distributed.md)
	@bash scripts/deps.sh image
	VERSION=$(VERSION) IMAGE=$(IMAGE) bash scripts/container.sh build

k8s-check: ## on a real one-node Kubernetes (../shared/k8s; root): docs/distributed.md's run as written, the real Triton, five faults; always torn down (scripts/k8s-check.sh)
	bash scripts/k8s-check.sh

image-check: image ## in containers: perfscen version, the quickstart, and a distributed run (perfscen serve, coordinator, two agents) with one verdict
	VERSION=$(VERSION) IMAGE=$(IMAGE) bash scripts/container.sh check

generate: ## regenerate gRPC stubs (needs protoc; installs pinned plugins into bin/)
	bash scripts/generate.sh

clean:
	rm -rf bin out

# The HTML reports of the showcase scenarios, rendered in a headless
# chromium (Debian's `chromium` package; PERFSCEN_CHROMIUM names another
# binary): the browser test measures every chart as the browser drew it
# and writes one screenshot per report. A scenario that ends 1 or 4 on a
# busy machine still writes its report.
SCREENSHOT_SCENARIOS ?= engine-comparison server-ab llm-quickstart
# The history report (perfscen baseline history) of this shipped baseline,
# on the metrics its scenario gates, is screenshotted as
# docs/screenshots/history.png.
HISTORY_BASELINE ?= baselines/quickstart.json --metric throughput --metric p50
.PHONY: screenshots
screenshots: build ## run the showcase scenarios and screenshot their HTML reports and a baseline's history report into docs/screenshots (needs chromium)
	@bash scripts/deps.sh screenshots
	@mkdir -p out/screenshots
	@for s in $(SCREENSHOT_SCENARIOS); do \
	  echo "== $$s"; \
	  $(PERFSCEN) run scenarios/$$s.yaml --quiet --html out/screenshots/$$s.html --out out/screenshots/$$s.json > out/screenshots/$$s.txt; \
	  test -s out/screenshots/$$s.html || { cat out/screenshots/$$s.txt; exit 1; }; \
	done
	$(PERFSCEN) baseline history $(HISTORY_BASELINE) --html out/screenshots/history.html > /dev/null
	PERFSCEN_SCREENSHOTS=$(CURDIR)/docs/screenshots \
	PERFSCEN_SCREENSHOT_HTML="$(shell echo $(SCREENSHOT_SCENARIOS:%=$(CURDIR)/out/screenshots/%.html) $(CURDIR)/out/screenshots/history.html | tr ' ' ',')" \
	  $(GO) test -count=1 -run TestHTMLInBrowser -v ./internal/report
