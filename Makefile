# The front door. `make run` and `make test` work on a fresh Debian 12 machine.
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps build run test test-quick test-asan fuzz bench format clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The main job on the bundled default model.
run: build
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
