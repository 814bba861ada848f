# Regiment. `make run` runs the whole system on embedded defaults; `make test`
# runs every test, building whatever it needs first.
GO      ?= go
BIN     ?= bin
GOFLAGS ?=
export GOFLAGS

.PHONY: all build run test test-short bench fuzz vet fmt clean image mutate

all: build

# --version says VERSION and REVISION (below), also where the build has no
# VCS information (a git worktree, -buildvcs=false).
build:
	$(GO) build -ldflags='$(VERSION_LDFLAGS)' -o $(BIN)/ ./cmd/...

run: build
	$(BIN)/regiment run

# The whole suite: unit tests, real embedded NATS and bbolt tests, the
# Kubernetes integration tests, and short fuzz runs of the decoders. The
# packages that start goroutines (RACE_PKGS) run under the race detector; the
# rest run without it. REGIMENT_K8S_REQUIRED=1 makes absent control-plane
# binaries a failure, never a skip (internal/adapter/kube/testenv.Main).
RACE_PKGS ?= ./internal/core/soldier/ ./internal/core/commander/ ./internal/adapter/bus/... ./internal/daemon/ ./internal/adapter/store/ ./internal/offline/baseline/ ./internal/offline/eval/ ./internal/offline/train/ ./internal/cli/...
test: export REGIMENT_K8S_REQUIRED = 1
test: vet k8s-env
	$(GO) test -race -count=1 -timeout 30m $(RACE_PKGS)
	$(GO) test -count=1 $$($(GO) list ./... | grep -vxF "$$($(GO) list $(RACE_PKGS))")
	$(MAKE) fuzz FUZZTIME=20000x

# Kubernetes control-plane binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) for the kube integration tests: built once from the Go
# module proxy (15-20 min cold on 2 cores: 897 s idle, 20 min loaded; see
# docs/kubernetes.md#test-environment) and cached outside the repository by
# version, in $$REGIMENT_K8S_CACHE or ~/.cache/regiment/k8s/<version>; a no-op
# when they are there. The tests start them themselves, on loopback.
.PHONY: k8s-env
k8s-env:
	hack/k8s-testenv.sh build
export REGIMENT_K8S_ASSETS ?= $(shell hack/k8s-testenv.sh dir)

# The container image (docs/kubernetes.md#building-the-image), without a
# container engine: commander, soldier and regiment built static
# (CGO_ENABLED=0, -trimpath) and models/ on an empty base, run as 65532,
# written as an OCI layout (bin/regiment-oci) and a tarball
# (bin/regiment-image.tar); prints the digest. The binaries' --version says
# VERSION and REVISION (set at link time: -buildvcs=false keeps the build
# reproducible). Reproducible: every mtime is
# SOURCE_DATE_EPOCH (default: the last commit's time), so one commit and one
# toolchain give one digest.
IMAGE             ?= ghcr.io/regimentd/regiment
VERSION           ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION          ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
GOARCH_IMAGE      ?= $(shell $(GO) env GOARCH)
VERSION_LDFLAGS    = -X github.com/regimentd/regiment/internal/cli.release=$(VERSION) -X github.com/regimentd/regiment/internal/cli.revision=$(REVISION)
image:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_IMAGE) $(GO) build -trimpath -buildvcs=false -o $(BIN)/image/ \
	  -ldflags='-s -w -buildid= $(VERSION_LDFLAGS)' ./cmd/...
	$(GO) run ./deploy/image --bin $(BIN)/image --models models --arch $(GOARCH_IMAGE) \
	  --epoch $(SOURCE_DATE_EPOCH) --image-version $(VERSION) --revision '$(REVISION)' --tag $(IMAGE):$(VERSION) \
	  --layout $(BIN)/regiment-oci --tar $(BIN)/regiment-image.tar

# The fast suite: -short, no Kubernetes control plane (those tests skip and
# say so), no race detector.
test-short:
	$(GO) test -short ./...

vet:
	$(GO) vet ./...

# Hot-path benchmarks; the figures in docs/performance.md#performance come from here.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/offline/sim/ ./internal/offline/baseline/ ./internal/offline/simcluster/ ./internal/adapter/bus/... ./internal/adapter/store/

# Every Fuzz target in the tree, each for FUZZTIME. A count, not a duration:
# Go 1.26's fuzz coordinator can fail a duration-bounded run with a spurious
# "context deadline exceeded" at the deadline (go.dev/issue/75804).
FUZZTIME ?= 200000x
fuzz:
	@set -e; grep -rlE --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u | while read -r dir; do \
	  for f in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/p' $$dir/*_test.go); do \
	    echo "fuzz $$dir $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$dir; \
	  done; \
	done

# The mutation check: each mutant in hack/mutate/mutants.go applied alone to a
# temporary copy of the tree must fail its package's tests. Minutes; not part
# of `make test`. Exits 1 if any mutant survived.
mutate:
	$(GO) run ./hack/mutate

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
