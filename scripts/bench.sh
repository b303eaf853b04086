#!/usr/bin/env bash
# `make bench`: every Google Benchmark program under the build's bench/ folder.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
found=0
for b in "$BUILD"/bench/bench_*; do
  [ -x "$b" ] || continue
  found=1
  echo "== $(basename "$b")"
  "$b" --benchmark_counters_tabular=true
done
((found)) || echo "bench: no benchmark programs built yet"
