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
trap 'rm -f "$schema" "$out"' EXIT
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
read -r -a configs <<<"${CONFIGS:-mtp mtp+schema mtp4 mtp4+schema none+schema}"
# BEFORE_CONFIGS: which configurations the other build runs (default its mtp+schema, mtp4+schema).
if [ -n "$BEFORE" ]; then
  for c in ${BEFORE_CONFIGS:-mtp+schema mtp4+schema}; do configs+=("before:$c"); done
fi
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
n_configs=${#configs[@]}
for rep in $(seq "$REPS"); do
  for i in $(seq 0 $((n_configs - 1))); do
    config=${configs[$(((i + rep - 1) % n_configs))]}
    bin=$BUILD
    [ "${config#before:}" != "$config" ] && bin=$BEFORE
    args=(-m "$TARGET" -n "$N" --temp 0 -t "$THREADS" -p "$PROMPT" --json)
    c=${config#before:}
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
    json=$("$bin/tandem" run "${args[@]}" 2>/dev/null)
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
