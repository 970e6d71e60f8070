# meshfs: `make demo` shows the main job on the bundled samples, `make test` runs every test.
GO      ?= go
BUILD   := build
BIN     := $(BUILD)/meshfs
VALIDATOR := export/gltf/validator

.PHONY: setup lint all build test test-race test-clients test-hostile soak preview validator demo bench bench-go readpath fuzz clean fixtures

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
	$(MAKE) lint
	$(GO) test -count=1 -timeout 20m ./...
	$(MAKE) test-race
	$(MAKE) test-clients

# staticcheck, pinned; fetched through the Go module proxy on first use.
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.6.1 ./...

# Real clients as judges: the Khronos validator, Blender 3.4 and assimp read
# every file from a meshfs mount of testdata/ and ../shared; TestModelClients
# imports every model of ../shared/assets as one hierarchy; TestPreviewClients
# holds every NAME.preview.png to Blender's render of its .glb.
test-clients: validator
	$(GO) test -count=1 -timeout 20m ./internal/clienttest -run 'TestClients|TestModelClients|TestPreviewClients' -clients -v

# The hostile corpus in full (~53 000 variants, 1-2 minutes on 2 cores); `make test`
# already runs a fixed sample of ~3 800. HOSTILE_SEED=n repeats a run; failing
# variants are saved under build/hostile (copy fixture-derived ones to
# export/outputs/hostile/testdata/regress/).
HOSTILE_SEED ?=
test-hostile:
	MESHFS_HOSTILE=full MESHFS_HOSTILE_SEED=$(HOSTILE_SEED) MESHFS_HOSTILE_SAVE=$(CURDIR)/$(BUILD)/hostile \
	  $(GO) test -count=1 -timeout 30m -v -run 'TestHostile|TestRegressions' ./export/outputs/hostile

# The soak: 8 readers (cat, pread, mmap, grep -r) over a mounted tree of
# 1 024 meshes while sources are rewritten, renamed and deleted every second.
SOAK ?= 10m
soak:
	MESHFS_SOAK=$(SOAK) $(GO) test -count=1 -timeout 30m -run 'TestSoak$$' -v ./cmd/meshfs

# The README's sheets, from meshfs's own previews (NAME.preview.png; no Blender):
# docs/preview.png, meshes of testdata/ and ../shared/assets; docs/models.png, the
# assembled models of ../shared/assets and a UNIGINE world (testdata/unigine/yard,
# whose meshes are all there, unlike the skyrunner worlds').
preview:
	$(GO) run ./internal/sheet -o docs/preview.png testdata=testdata assets=../shared/assets
	$(GO) run ./internal/sheet -models -tile 256 -max 9 -o docs/models.png assets=../shared/assets unigine-world=testdata/unigine/yard

# The concurrent core under the race detector: every test of internal/
# (store, cache, archive, source view, watcher, ...), and of fs and
# cmd/meshfs the tests that drive a daemon with concurrent readers,
# changes, remounts and storms on small inputs (RACE_FS, RACE_CMD): the
# plain run has already run every test once. RACE_SKIP are the one-goroutine
# tests of big hostile inputs, which the detector only slows. cmd/meshfs's tests build the
# daemon with -race too (TestDaemonRaceBuilt checks it), so a race it
# reports fails the test that started it. MESHFS_RACE makes a test binary
# built without -race fail.
RACE_FS  = TestConcurrentReadersOneConversion|TestNoOpenConcurrentReaders|TestHeaderPushRacesReads|TestReplacedUnderOpenFile|TestNoSplicedReadsInPlace|TestSourceReplaced|TestAppearAndVanish|TestNoOpenChangesSeen|TestDiskCacheRemount|TestPrewarmFillsDiskCache|TestScanAhead|TestListAhead|TestReadRightAfterChange|TestPartChangeRemakesModel|TestExactSizesSample|TestArchiveChangeRemakes|TestStatsJSON|TestNoLeaks|TestPanicIsEIO
RACE_SKIP = TestFarReadBudget|TestListingsBudget|TestCheckpointsInsideBlock|TestHostile|TestRecoverDescriptors|TestBombs|TestCheckpointReads|TestBlockDecoderAgrees|TestInovaArchive|TestZip64EndRecords|TestNestedThroughCheckpoints|TestMetaHostileIndex
RACE_CMD = TestDaemonRaceBuilt|TestConversionStorm|TestNoSplicedReads|TestSoak|TestDaemonNoLeaks|TestMountSIGINTWhileBusy|TestMemoryBound|TestMountOverKilledDaemon
test-race:
	MESHFS_RACE=1 $(GO) test -count=1 -race -timeout 15m -skip '^($(RACE_SKIP))$$' ./internal/...
	MESHFS_RACE=1 $(GO) test -count=1 -race -timeout 15m -run '^($(RACE_FS))$$' ./fs
	MESHFS_RACE=1 $(GO) test -count=1 -race -timeout 15m -run '^($(RACE_CMD))$$' ./cmd/meshfs

# Regenerate the committed fixtures under testdata/ from the encoders (the
# decoder packages that define -update; the other packages refuse the flag).
FIXTURE_PKGS = ./decode/gem ./decode/tfever ./decode/unigine
fixtures:
	$(GO) test $(FIXTURE_PKGS) -run TestFixtures -update

# Ten minutes of coverage-guided fuzzing per decoder and of the archive
# reader (FUZZTIME to change).
FUZZTIME ?= 10m
fuzz:
	for p in $$($(GO) list ./decode/...); do \
	  if $(GO) test -list 'Fuzz.*' $$p | grep -q '^Fuzz'; then \
	    $(GO) test $$p -run XXX -fuzz FuzzDecode -fuzztime $(FUZZTIME) -parallel 2 || exit 1; fi; done
	$(GO) test ./internal/archive -run XXX -fuzz FuzzOpen -fuzztime $(FUZZTIME) -parallel 2
	$(GO) test ./internal/archive -run XXX -fuzz FuzzBlockDecoder -fuzztime $(FUZZTIME) -parallel 2

# BENCHMARKS.md: the targets of issues 30-32 (in-memory conversion, first reads
# through the mount, models, walks of a 10 000-mesh tree against plain trees of
# the same shape, previews, serve against nginx and rclone, daemon peak RSS,
# assimp), each measured side by side with BASELINE (a revision, built in a git
# worktree under build/bench-base/), A B A B. It lists every target met or
# missed and fails when one is missed (BENCHMARKS.md is written all the same).
# BENCH_FLAGS=-quick: 3 runs a side and a 2 000-mesh tree.
BASELINE ?= aeabf7d
BENCH_FLAGS ?=
bench: build
	$(GO) run ./cmd/meshfs-bench -meshfs $(BIN) -baseline $(BASELINE) -o BENCHMARKS.md $(BENCH_FLAGS)

# The packages a cold first read of one .glb through the mount runs
# (coverage counters of a listing-only run subtracted).
readpath:
	bash cmd/meshfs-bench/readpath.sh

# Only the Go benchmarks of every package.
bench-go:
	mkdir -p $(BUILD) && $(GO) test -run XXX -bench . -benchmem ./... | tee $(BUILD)/bench.txt

setup:
	bash .ci/setup

demo: build validator
	bash cmd/meshfs/demo.sh $(BIN)

clean:
	rm -rf $(BUILD)
