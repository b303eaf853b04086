# The front door. `make run` and `make test` work on a fresh Debian 12 machine. `make run` installs
# and compiles only what the `tandem` binary needs; `make test` adds everything else.
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps deps-run build build-run run test test-quick test-asan fuzz bench format clean

all: build

# Every package: building, running, tests, benchmarks, fuzzers.
deps:
	@bash scripts/install-deps.sh test

# Only what building and running `tandem` need.
deps-run:
	@bash scripts/install-deps.sh run

# Every target: the binary, the tools, every test binary and the benchmark programs.
build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DTANDEM_BENCH=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The `tandem` binary alone (no benchmark programs configured: their library is a test package).
build-run: deps-run
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DTANDEM_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target tandem

# The main job on the bundled default model.
run: build-run
	@bash scripts/run-demo.sh $(BUILD)

# Every test: the release build's suites, the unit tests under ASan+UBSan, and the fuzz run.
test: deps
	@bash scripts/test.sh

# Release-build suites only (fast inner loop for developers).
test-quick: build
	@ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

test-asan: deps
	@bash scripts/test.sh asan

fuzz: deps
	@bash scripts/test.sh fuzz

bench: build
	@bash scripts/bench.sh $(BUILD)

format:
	@clang-format -i $$(git ls-files 'src/*.cpp' 'src/*.h' 'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' 'tools/*.cpp')

clean:
	rm -rf build build-sanitize
