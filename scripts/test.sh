#!/usr/bin/env bash
# Runs tandem's tests. No argument: every stage (release suites, unit tests under ASan+UBSan, the
# bounded fuzz run). With an argument: only that stage (release | asan | fuzz).
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
# A clean clone elsewhere on the same machine reuses the compiler cache (paths are relative).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
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

# configure_and_build DIR [cmake args...]
configure_and_build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" "$@" >/dev/null || { status=1; return 1; }
  cmake --build "$dir" -j"$JOBS" || { status=1; return 1; }
}

# The one sanitized build (clang; ASan+UBSan, libFuzzer coverage): the unit tests of the asan
# stage and the fuzz targets share it, so the tree is compiled twice per run, not three times.
configure_sanitized() {
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_FUZZ=ON \
    -DTANDEM_WERROR=OFF -DTANDEM_BENCH=OFF -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ >/dev/null
}

# run_fuzzer TARGET: FUZZ_SECONDS of TARGET over a copy of its seed corpus; TARGET.ok on success.
run_fuzzer() {
  local target=$1 name corpus
  name=$(basename "$target")
  corpus=$(mktemp -d)
  rm -f "$target.ok"
  if [ -d "tests/fuzz/corpus/$name" ]; then cp -r "tests/fuzz/corpus/$name/." "$corpus/"; fi
  "$target" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 "$corpus" >"$target.log" 2>&1 && touch "$target.ok"
  rm -rf "$corpus"
}

for stage in "${stages[@]}"; do
  case "$stage" in
    release)
      echo "== release build: all suites"
      # TANDEM_BENCH=ON: a tree that `make run` configured has the benchmark programs off.
      configure_and_build build -DCMAKE_BUILD_TYPE=Release -DTANDEM_BENCH=ON && run_ctest build
      ;;
    asan)
      echo "== ASan+UBSan build (clang, shared with the fuzz stage): unit tests"
      configure_sanitized && cmake --build build-sanitize -j"$JOBS" || status=1
      ((status)) || ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_ctest build-sanitize -L unit
      ;;
    fuzz)
      echo "== fuzz: ${FUZZ_SECONDS}s per target under ASan+UBSan, $JOBS at a time"
      if configure_sanitized && cmake --build build-sanitize -j"$JOBS" --target fuzzers; then
        targets=(build-sanitize/fuzz_*)
        for ((i = 0; i < ${#targets[@]}; i += JOBS)); do
          batch=("${targets[@]:i:JOBS}")
          for target in "${batch[@]}"; do
            [ -x "$target" ] && run_fuzzer "$target" &
          done
          wait
          for target in "${batch[@]}"; do
            [ -x "$target" ] || continue
            name=$(basename "$target")
            if [ -f "build-sanitize/$name.ok" ]; then
              echo "fuzz $name: ok ($(grep -E 'stat::number_of_executed_units' "build-sanitize/$name.log" | awk '{print $2}') runs)"
              passed=$((passed + 1))
            else
              echo "fuzz $name: FAILED, log follows"
              tail -60 "build-sanitize/$name.log"
              failed=$((failed + 1))
              status=1
            fi
          done
        done
      else
        status=1
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
