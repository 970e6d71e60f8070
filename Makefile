# meshfs: `make demo` shows the main job on the bundled samples, `make test` runs every test.
GO      ?= go
BUILD   := build
BIN     := $(BUILD)/meshfs
VALIDATOR := export/gltf/validator

.PHONY: all build test test-race test-clients preview validator demo bench fuzz clean fixtures

all: build

build:
	$(GO) build -o $(BIN) ./cmd/meshfs

# The Khronos glTF validator, pinned in $(VALIDATOR)/package-lock.json.
validator: $(VALIDATOR)/node_modules/.package-lock.json
$(VALIDATOR)/node_modules/.package-lock.json: $(VALIDATOR)/package.json $(VALIDATOR)/package-lock.json
	cd $(VALIDATOR) && npm ci --no-audit --no-fund --loglevel=error

# Every test: vet, the whole suite (fuzz targets run their seed corpora), and
# the concurrent packages again under the race detector.
test: validator
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...
	$(MAKE) test-race
	$(MAKE) test-clients

# Real clients as judges: the Khronos validator, Blender 3.4 and assimp read
# every file from a meshfs mount of testdata/ and ../shared/realdata.
test-clients: validator
	$(GO) test -count=1 -timeout 20m ./fs/clienttest -run TestClients -clients -v

# Contact sheet of every .glb of the mounted testdata/, rendered by Blender Workbench.
preview: build
	bash fs/clienttest/preview.sh $(BIN) $(BUILD)/preview

test-race:
	$(GO) test -count=1 -race -timeout 20m ./fs/... ./cmd/meshfs

# Regenerate the committed fixtures under testdata/ from the encoders.
fixtures:
	$(GO) test ./decode/... -run TestFixtures -update

# Ten minutes of coverage-guided fuzzing per decoder (FUZZTIME to change).
FUZZTIME ?= 10m
fuzz:
	for p in $$($(GO) list ./decode/...); do \
	  if $(GO) test -list 'Fuzz.*' $$p | grep -q '^Fuzz'; then \
	    $(GO) test $$p -run XXX -fuzz FuzzDecode -fuzztime $(FUZZTIME) -parallel 2 || exit 1; fi; done

bench:
	$(GO) test -run XXX -bench . -benchmem ./... | tee $(BUILD)/bench.txt

demo: build validator
	bash cmd/meshfs/demo.sh $(BIN)

clean:
	rm -rf $(BUILD)
