#!/usr/bin/env bash
# A forced tool call under MTP (issue 16): REQS greedy chat requests with `tool_choice:
# "required"` (one tool, three required parameters) to `tandem serve` on the bundled pair
# (--draft-max 4 --no-adaptive, -t 2), then the server's grammar-forced draft counters from
# /metrics (drafted, reached by verification, accepted). Prints each call and its decode tok/s.
#
#   bench/spec_tool_call.sh [BUILD] [REQS] [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
REQS=${2:-5}
PORT=${3:-18431}
log=$(mktemp)
"$BUILD/tandem" serve -m models/tandem-gemma4-tiny-Q8_0.gguf \
  -md models/tandem-gemma4-tiny-assistant-Q8_0.gguf --draft-max 4 --no-adaptive -t 2 \
  --port "$PORT" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 120); do curl -sf "localhost:$PORT/health" >/dev/null && break; sleep 0.5; done
tools='[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
  "properties":{"city":{"type":"string","maxLength":20},"days":{"type":"integer","minimum":0,
  "maximum":14},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","days","unit"],
  "additionalProperties":false}}}]'
for i in $(seq "$REQS"); do
  curl -s "localhost:$PORT/v1/chat/completions" -H 'content-type: application/json' -d '{
    "temperature": 0, "max_tokens": 120, "tool_choice": "required", "tools": '"$tools"',
    "messages": [{"role": "user", "content": "What is the weather in Oslo '"$i"' days from now?"}]}' |
    python3 -c 'import json, sys
j = json.load(sys.stdin)
call = (j["choices"][0]["message"].get("tool_calls") or [{}])[0].get("function")
print(call, round(j.get("timings", {}).get("predicted_per_second", 0), 1), "tok/s")'
done
# forced: all grammar-forced drafts; source="grammar": those verification reached (a forced draft
# after a rejected drafter draft is never tested), and of them accepted.
curl -s "localhost:$PORT/metrics" |
  grep -E '^tandem_spec_(forced|drafted|accepted)_(accepted_)?tokens_total|^tandem_spec_source_(drafted|accepted)_tokens_total\{source="grammar"'
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average $(cut -d' ' -f1-3 /proc/loadavg)"
