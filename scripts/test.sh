#!/usr/bin/env bash
# Runs tandem's tests. No argument: every stage (release suites, unit tests under ASan+UBSan, the
# bounded fuzz run). With an argument: only that stage (release | asan | fuzz).
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
stages=("$@")
((${#stages[@]})) || stages=(release asan fuzz)

passed=0
failed=0
status=0

# run_ctest DIR [ctest args...]: runs ctest, adds its counts to the totals.
run_ctest() {
  local dir=$1
  shift
  local log
  log=$(mktemp)
  ctest --test-dir "$dir" --output-on-failure -j"$JOBS" "$@" 2>&1 | tee "$log"
  local line
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "test.sh: ctest in $dir printed no summary" >&2
    status=1
  else
    local total fails
    total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    fails=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")
    passed=$((passed + total - fails))
    failed=$((failed + fails))
    ((fails == 0)) || status=1
  fi
  rm -f "$log"
}

# configure_and_build DIR [cmake args...]; BUILD_TARGET (optional) limits the build.
configure_and_build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" "$@" >/dev/null || { status=1; return 1; }
  cmake --build "$dir" -j"$JOBS" ${BUILD_TARGET:+--target "$BUILD_TARGET"} || { status=1; return 1; }
}

for stage in "${stages[@]}"; do
  case "$stage" in
    release)
      echo "== release build: all suites"
      configure_and_build build -DCMAKE_BUILD_TYPE=Release && run_ctest build
      ;;
    asan)
      echo "== ASan+UBSan build: unit tests"
      configure_and_build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_SANITIZE=ON \
        -DTANDEM_BENCH=OFF && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_ctest build-asan -L unit
      ;;
    fuzz)
      echo "== fuzz: ${FUZZ_SECONDS}s per target under ASan+UBSan"
      if BUILD_TARGET=fuzzers configure_and_build build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_FUZZ=ON \
        -DTANDEM_WERROR=OFF -DTANDEM_BENCH=OFF -DCMAKE_C_COMPILER=clang \
        -DCMAKE_CXX_COMPILER=clang++; then
        for target in build-fuzz/fuzz_*; do
          [ -x "$target" ] || continue
          name=$(basename "$target")
          corpus=$(mktemp -d)
          if [ -d "tests/fuzz/corpus/$name" ]; then cp -r "tests/fuzz/corpus/$name/." "$corpus/"; fi
          if "$target" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=10 \
            -print_final_stats=1 "$corpus" >"build-fuzz/$name.log" 2>&1; then
            echo "fuzz $name: ok ($(grep -E 'stat::number_of_executed_units' "build-fuzz/$name.log" | awk '{print $2}') runs)"
            passed=$((passed + 1))
          else
            echo "fuzz $name: FAILED, log follows"
            tail -60 "build-fuzz/$name.log"
            failed=$((failed + 1))
            status=1
          fi
          rm -rf "$corpus"
        done
      fi
      ;;
    *)
      echo "test.sh: unknown stage $stage" >&2
      exit 2
      ;;
  esac
done

echo "tandem: $passed passed, $failed failed"
exit $status
