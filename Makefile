# Regiment. `make run` runs the whole system on embedded defaults; `make test`
# runs every test, building whatever it needs first.
GO      ?= go
BIN     ?= bin
GOFLAGS ?=
export GOFLAGS

.PHONY: all build run test test-short bench fuzz vet fmt clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

run: build
	$(BIN)/regiment run

# The whole suite: unit tests, real embedded NATS and bbolt tests, and short
# fuzz runs of the decoders.
test: vet
	$(GO) test -count=1 ./...
	$(MAKE) fuzz FUZZTIME=10s

test-short:
	$(GO) test -short ./...

vet:
	$(GO) vet ./...

# Hot-path benchmarks; the figures in README's performance section come from here.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./sim/ ./bus/... ./store/

FUZZTIME ?= 30s
fuzz:
	@set -e; for target in $$(grep -rlE --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' $$target/*_test.go | cut -d' ' -f2); do \
	    echo "fuzz $$target $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$target >/dev/null || { $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$target; exit 1; }; \
	  done; \
	done

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
