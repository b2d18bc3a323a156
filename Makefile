# kubectl-gang: every habit has a target. `make demo` runs the main job on the
# example snapshot; `make test` runs every test, building the real Kubernetes
# binaries the integration tests need on first use (cached afterwards).

# A failing command in a pipe fails the recipe (test-conformance filters
# its output through grep).
SHELL        := bash
.SHELLFLAGS  := -eo pipefail -c

GO       ?= go
BIN      ?= bin
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -X github.com/kubectl-gang/kubectl-gang/pkg/version.Version=$(VERSION)
UNIT_PKGS := ./pkg/... ./cmd/... ./hack/examplegen/...

# Where hack/build-k8s.sh puts etcd, kube-apiserver and kube-scheduler,
# hack/build-schedplugins.sh scheduler-plugins' kube-scheduler (Coscheduling),
# hack/build-controllers.sh kube-controller-manager and the JobSet
# controller, and hack/build-kueue.sh Kueue's controller manager.
K8S_BIN_DIR = $(shell hack/build-k8s.sh)
SCHEDPLUGINS_BIN = $(shell hack/build-schedplugins.sh)
CONTROLLERS_DIR = $(shell hack/build-controllers.sh)
KUEUE_DIR = $(shell hack/build-kueue.sh)
TEST_ENV = KUBECTL_GANG_K8S_BIN="$(K8S_BIN_DIR)" KUBECTL_GANG_SCHEDPLUGINS_BIN="$(SCHEDPLUGINS_BIN)" \
	KUBECTL_GANG_CONTROLLERS_BIN="$(CONTROLLERS_DIR)" KUBECTL_GANG_KUEUE_BIN="$(KUEUE_DIR)"

.PHONY: all build install test test-unit test-integration test-conformance test-binaries bench bench-e2e verify demo release clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/kubectl-gang ./cmd/kubectl-gang

install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/kubectl-gang

# The main job on the example snapshot shipped in the repo: no cluster needed.
# The example gang does not fit, so the command's exit code is 3 (a clean "no").
DEMO_ARGS ?= explain podgroup/llm-pretrain -n ml-research --snapshot examples/gpu-cluster.yaml
demo: build
	@$(BIN)/kubectl-gang $(DEMO_ARGS) || [ $$? -eq 3 ]

# test-binaries builds etcd, kube-apiserver, kube-scheduler,
# scheduler-plugins' kube-scheduler, kube-controller-manager, the JobSet
# controller and Kueue's controller manager from the Go module proxy into
# the cache once (about 22 minutes on 2 cores), then reuses them.
test-binaries:
	@hack/build-k8s.sh >/dev/null
	@hack/build-schedplugins.sh >/dev/null
	@hack/build-controllers.sh >/dev/null
	@hack/build-kueue.sh >/dev/null

test: test-binaries
	$(TEST_ENV) $(GO) test -count=1 ./...

test-unit:
	$(GO) test -count=1 $(UNIT_PKGS)

test-integration: test-binaries
	$(TEST_ENV) $(GO) test -count=1 ./test/...

# The conformance suite alone: CONFORMANCE_SCENARIOS=N changes the number of
# random scenarios (500 by default), CONFORMANCE_SEED=N replays one.
test-conformance: test-binaries
	KUBECTL_GANG_K8S_BIN="$(K8S_BIN_DIR)" $(GO) test -count=1 -v ./test/conformance/... | grep -E '^\s*(--- FAIL|FAIL|ok)|replay:|conformance:|disagree|node .*: final score'

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./pkg/...

# The end-to-end benchmarks on the test bed (a real apiserver and
# kube-scheduler, 5,000 nodes): minutes of set-up, so not part of make bench.
# It also builds kubectl (once) to compare with kubectl get pods -A -o json.
bench-e2e: test-binaries
	@[ -x "$(K8S_BIN_DIR)/kubectl" ] || (cd hack/k8s && CGO_ENABLED=0 $(GO) build -trimpath -ldflags=-s -o "$(K8S_BIN_DIR)/kubectl" k8s.io/kubernetes/cmd/kubectl)
	KUBECTL_GANG_K8S_BIN="$(K8S_BIN_DIR)" $(GO) test -run='^$$' -bench=. -benchtime=1x -timeout=60m -v ./test/bench/

verify:
	hack/verify.sh

release:
	hack/release.sh $(VERSION) dist

clean:
	rm -rf $(BIN) dist
