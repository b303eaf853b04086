#!/usr/bin/env bash
# JSON-schema extraction under speculation (issue 16), interleaved (each repetition runs every
# configuration once, in an order rotated per repetition, so a drift of a shared machine's speed
# hits all alike). Prints one line per run (decode tok/s, tokens per target forward, grammar
# drafts, forced and layout guesses, accepted / reached / drafted) and, at the end, the median, mean and spread per
# configuration and the same-run ratios (of the medians) of each constrained configuration to its
# unconstrained one.
#
#   bench/spec_schema.sh [BUILD] [REPS] [TARGET ASSISTANT] [N]
#
# Workload: greedy, N tokens (default 256), the `make run` prompt, the schema below (an object
# with string, enum, array and boolean properties), THREADS threads (default 1: on a shared
# 2-vCPU machine a 2-thread forward waits for a descheduled worker, and verifying 2 rows cost
# 4.8x one row at -t 2 against 1.06x at -t 1 on the trained pair, load ~5). Configurations (CONFIGS overrides,
# space-separated): mtp and mtp+schema (MTP as `tandem run` defaults to: adaptive draft lengths),
# mtp4 and mtp4+schema (--draft-max 4 --no-adaptive, as `make run`), none+schema (plain
# constrained decoding); X+line is X+schema with --json-one-line (fixed whitespace). Set
# BEFORE=<other build dir> to add that build's mtp+schema and mtp4+schema (BEFORE_CONFIGS: others;
# a change's before and after in the same run). SCHEMA=<file> replaces the schema;
# PROMPT_FILE=<file> the prompt (an extraction: the file, then a request for JSON about it).
# SERVE=1: as an extraction pipeline runs it, through `tandem serve` (one server per build, MTP,
# one slot), each run one /completion request: the server keeps compiled grammars, so only its
# first request with the schema pays the lazily built grammar states (that run is dropped:
# REPS + 1 runs per configuration). Configurations mtp, none (per request `speculative.enabled:
# false`) and their +schema, +line.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
REPS=${2:-3}
TARGET=${3:-models/tandem-gemma4-tiny-Q8_0.gguf}
ASSISTANT=${4:-models/tandem-gemma4-tiny-assistant-Q8_0.gguf}
N=${5:-256}
BEFORE=${BEFORE:-}
THREADS=${THREADS:-1}
schema=$(mktemp)
out=$(mktemp)
servers=()  # SERVE: the servers' process ids
trap 'rm -f "$schema" "$out"; for p in "${servers[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
cat >"$schema" <<'JSON'
{"type": "object", "properties": {
  "name": {"type": "string"}, "path": {"type": "string"},
  "kind": {"enum": ["function", "class", "module"]},
  "args": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
  "returns_value": {"type": "boolean"}},
 "required": ["name", "path", "kind", "args", "returns_value"], "additionalProperties": false}
JSON
[ -n "${SCHEMA:-}" ] && cp "$SCHEMA" "$schema"
PROMPT=$'import os\n\n\ndef read_lines(path):\n    """Return the lines of the file at path."""\n'
# PROMPT_FILE=<file>: an extraction prompt instead (the file, then a request for its first
# function as JSON).
if [ -n "${PROMPT_FILE:-}" ]; then
  PROMPT="$(cat "$PROMPT_FILE")

# The first function of this module, as JSON (name, path, kind, args, returns_value):
"
fi
default_configs="mtp mtp+schema mtp4 mtp4+schema none+schema"
[ -n "${SERVE:-}" ] && default_configs="mtp mtp+schema none none+schema"
read -r -a configs <<<"${CONFIGS:-$default_configs}"
# BEFORE_CONFIGS: which configurations the other build runs (default its mtp+schema, mtp4+schema).
if [ -n "$BEFORE" ]; then
  default_before="mtp+schema mtp4+schema"
  [ -n "${SERVE:-}" ] && default_before="mtp+schema"
  for c in ${BEFORE_CONFIGS:-$default_before}; do configs+=("before:$c"); done
fi
# SERVE=1: a server per build, on a free port; serve_port[BIN] = its port.
declare -A serve_port
if [ -n "${SERVE:-}" ]; then
  for bin in "$BUILD" ${BEFORE:+"$BEFORE"}; do
    log=$(mktemp)
    "$bin/tandem" serve -m "$TARGET" -md "$ASSISTANT" --spec-type mtp -t "$THREADS" \
      --parallel 1 --port 0 >"$log" 2>&1 &
    servers+=($!)
    for _ in $(seq 600); do
      grep -q "ready on" "$log" && break
      sleep 0.1
    done
    if ! grep -q "ready on" "$log"; then
      echo "$bin/tandem serve did not start:" >&2
      cat "$log" >&2
      exit 1
    fi
    serve_port[$bin]=$(grep -m1 -o 'listening on http://[^:]*:[0-9]*' "$log" | grep -o '[0-9]*$')
    rm -f "$log"
  done
fi
# One run of `config` with the tandem of `bin`: the `tandem run --json` object (SERVE: an
# equivalent object made of the /completion response).
run_one() {
  local config=$1 bin=$2 c=${1#before:}
  if [ -n "${SERVE:-}" ]; then
    python3 - "${serve_port[$bin]}" "$c" "$N" "$PROMPT" "$schema" <<'PY'
import json, sys, urllib.request
port, c, n, prompt, schema = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
body = {"prompt": prompt, "n_predict": n, "temperature": 0, "cache_prompt": False}
kind, _, constraint = c.partition("+")
if kind == "none":
    body["speculative"] = {"enabled": False}
elif kind != "mtp":
    sys.exit(f"SERVE runs mtp and none, not {c}")
if constraint:
    body["json_schema"] = json.load(open(schema))
    body["structured_outputs"] = {"disable_any_whitespace": constraint == "line"}
req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
j = json.load(urllib.request.urlopen(req))
t = j["timings"]
print(json.dumps({"timings": t, "speculative": t.get("speculative", {}),
                  "tokens": [0] * t["predicted_n"]}))
PY
    return
  fi
  local args=(-m "$TARGET" -n "$N" --temp 0 -t "$THREADS" -p "$PROMPT" --json)
  case "${c%+*}" in
    mtp) args+=(-md "$ASSISTANT" --spec-type mtp) ;;
    mtp4) args+=(-md "$ASSISTANT" --spec-type mtp --draft-max 4 --no-adaptive) ;;
    none) args+=(--spec-type none) ;;
    *) echo "unknown configuration $config" >&2; exit 1 ;;
  esac
  case "$c" in
    *+schema) args+=(--json-schema "$schema") ;;
    *+line) args+=(--json-schema "$schema" --json-one-line) ;;
    *+*) echo "unknown configuration $config" >&2; exit 1 ;;
  esac
  "$bin/tandem" run "${args[@]}" 2>/dev/null
}
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
n_configs=${#configs[@]}
first=1
[ -n "${SERVE:-}" ] && first=0  # rep 0: the servers' first requests, not counted
for rep in $(seq "$first" "$REPS"); do
  for i in $(seq 0 $((n_configs - 1))); do
    config=${configs[$(((i + rep + n_configs - 1) % n_configs))]}
    bin=$BUILD
    [ "${config#before:}" != "$config" ] && bin=$BEFORE
    json=$(run_one "$config" "$bin")
    [ "$rep" = 0 ] && continue
    python3 - "$config" "$rep" "$json" <<'PY' | tee -a "$out"
import json, sys
c, rep, j = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
s = j["speculative"]
g = s.get("by_source", {}).get("grammar", {})
# grammar drafts (forced and layout guesses) accepted / reached (verification got to them) /
# drafted
print(f"{c} rep{rep} {j['timings']['predicted_per_second']:.1f} tok/s, {len(j['tokens'])} tokens, "
      f"tokens/forward {s.get('tokens_per_target_forward', 1):.2f}, "
      f"grammar {g.get('accepted', 0)}/{g.get('drafted', 0)}/"
      f"{s.get('forced', 0) + s.get('guessed', 0)}")
PY
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs, forced = collections.defaultdict(list), collections.defaultdict(lambda: [0, 0, 0])
tpf = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    runs[f[0]].append(float(f[2]))
    tpf[f[0]].append(float(f[7].rstrip(",")))
    for i, x in enumerate(f[-1].split("/")):
        forced[f[0]][i] += int(x)
mean = {k: statistics.mean(v) for k, v in runs.items()}
median = {k: statistics.median(v) for k, v in runs.items()}
for c, v in runs.items():
    a, r, d = forced[c]
    rate = f"{a / r:.2f} of reached" if r else "-"
    print(f"{c:20} median {median[c]:7.1f} tok/s  mean {mean[c]:7.1f}  min {min(v):7.1f}  "
          f"max {max(v):7.1f}  n {len(v)}  tokens/forward {statistics.mean(tpf[c]):.2f}  "
          f"grammar drafts accepted/reached/drafted {a}/{r}/{d} ({rate})")
# Same-run ratios: each constrained configuration over its unconstrained one (a before: one over
# the same configuration of this build too), of the medians, and the spread of the
# per-repetition ratios.
for c in mean:
    plain = c.split(":")[-1]
    bases = [plain.split("+")[0]] + ([plain] if plain != c else [])
    for base in bases:
        if "+" in c and base in runs and base != c:
            per_rep = [x / y for x, y in zip(runs[c], runs[base])]
            print(f"{c}/{base} {median[c] / median[base]:.2f}x of the medians (per repetition: "
                  f"median {statistics.median(per_rep):.2f}, {min(per_rep):.2f}-{max(per_rep):.2f})")
PY
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(grep -o -m1 -w avx512f /proc/cpuinfo || echo 'no avx512f'); load average $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
