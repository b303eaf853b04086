#!/usr/bin/env bash
# A forced tool call under MTP (issue 16): greedy chat requests with `tool_choice: "required"`
# (one tool, three required parameters) to `tandem serve` on the bundled pair (-t THREADS, default
# 1), interleaved over servers: each repetition sends one request to every server, in an order
# rotated per repetition (a drift of a shared machine's speed hits all alike). Servers: this build
# with adaptive MTP (mtp) and --draft-max 4 --no-adaptive (mtp4); BEFORE=<other build dir> adds
# that build's (before:mtp, before:mtp4). Prints each call and its decode tok/s, then per server
# the median tok/s and the grammar-forced draft counters from /metrics (drafted, reached by
# verification, accepted), and the same-run ratios of the medians.
#
#   bench/spec_tool_call.sh [BUILD] [REPS] [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
REPS=${2:-5}
PORT=${3:-18431}
BEFORE=${BEFORE:-}
THREADS=${THREADS:-1}
out=$(mktemp)
names=() pids=() logs=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -f "$out" "${logs[@]}"
}
trap cleanup EXIT
start() {  # name bin port args...
  local name=$1 bin=$2 port=$3 log
  shift 3
  log=$(mktemp)
  "$bin/tandem" serve -m models/tandem-gemma4-tiny-Q8_0.gguf \
    -md models/tandem-gemma4-tiny-assistant-Q8_0.gguf --spec-type mtp -t "$THREADS" \
    --port "$port" "$@" >"$log" 2>&1 &
  pids+=($!) names+=("$name:$port") logs+=("$log")
}
start mtp "$BUILD" "$PORT"
start mtp4 "$BUILD" $((PORT + 1)) --draft-max 4 --no-adaptive
if [ -n "$BEFORE" ]; then
  start before:mtp "$BEFORE" $((PORT + 2))
  start before:mtp4 "$BEFORE" $((PORT + 3)) --draft-max 4 --no-adaptive
fi
for entry in "${names[@]}"; do
  for _ in $(seq 120); do curl -sf "localhost:${entry##*:}/health" >/dev/null && break; sleep 0.5; done
done
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
tools='[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
  "properties":{"city":{"type":"string","maxLength":20},"days":{"type":"integer","minimum":0,
  "maximum":14},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","days","unit"],
  "additionalProperties":false}}}]'
n=${#names[@]}
for rep in $(seq "$REPS"); do
  for i in $(seq 0 $((n - 1))); do
    entry=${names[$(((i + rep - 1) % n))]}
    curl -s "localhost:${entry##*:}/v1/chat/completions" -H 'content-type: application/json' -d '{
      "temperature": 0, "max_tokens": 120, "tool_choice": "required", "tools": '"$tools"',
      "messages": [{"role": "user", "content": "What is the weather in Oslo '"$rep"' days from now?"}]}' |
      python3 -c 'import json, sys
j = json.load(sys.stdin)
call = (j["choices"][0]["message"].get("tool_calls") or [{}])[0].get("function")
print(sys.argv[1], sys.argv[2], round(j.get("timings", {}).get("predicted_per_second", 0), 1), call)' \
        "${entry%:*}" "rep$rep" | tee -a "$out"
  done
done
for entry in "${names[@]}"; do
  # forced: all grammar-forced drafts; layout_guess: the guessed ones; source="grammar": both,
  # those verification reached (a grammar draft after a rejected drafter draft is never
  # tested), and of them accepted.
  echo "${entry%:*} /metrics: $(curl -s "localhost:${entry##*:}/metrics" |
    grep -E '^tandem_spec_(forced|layout_guess|drafted|accepted)_(accepted_)?tokens_total|^tandem_spec_source_(drafted|accepted)_tokens_total\{source="grammar"' |
    sed 's/^tandem_spec_//' | tr '\n' ' ')"
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    runs[f[0]].append(float(f[2]))
med = {k: statistics.median(v) for k, v in runs.items()}
for c, v in runs.items():
    print(f"{c:12} median {med[c]:7.1f} tok/s  min {min(v):7.1f}  max {max(v):7.1f}  n {len(v)}")
for c in med:
    if c.startswith("before:") and c[7:] in med:
        print(f"{c[7:]}/{c} {med[c[7:]] / med[c]:.2f}x of the medians")
PY
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(grep -o -m1 -w avx512f /proc/cpuinfo || echo 'no avx512f'); load average $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
