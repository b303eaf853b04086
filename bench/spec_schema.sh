#!/usr/bin/env bash
# JSON-schema extraction under speculation (issue 16), interleaved (each repetition runs every
# configuration once, so a drift of a shared machine's speed hits all alike). Prints one line per
# run (decode tok/s, grammar-forced drafts accepted / drafted) and, at the end, the mean and
# spread per configuration and the same-run ratio of MTP + schema to unconstrained MTP.
#
#   bench/spec_schema.sh [BUILD] [REPS] [TARGET ASSISTANT] [N]
#
# Workload: greedy, N tokens (default 256), the `make run` prompt, the schema below (an object
# with string, enum, array and boolean properties). Configurations: mtp (unconstrained MTP),
# mtp+schema, none+schema (plain constrained decoding); --draft-max 4 --no-adaptive (as `make
# run`: on the bundled pair the adaptive controller mostly decodes plainly), 2 threads.
# Set BEFORE=<other build dir> to add that build's mtp+schema as a fourth configuration (the
# forced-draft acceptance before a change, in the same run).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
REPS=${2:-3}
TARGET=${3:-models/tandem-gemma4-tiny-Q8_0.gguf}
ASSISTANT=${4:-models/tandem-gemma4-tiny-assistant-Q8_0.gguf}
N=${5:-256}
BEFORE=${BEFORE:-}
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
PROMPT=$'import os\n\n\ndef read_lines(path):\n    """Return the lines of the file at path."""\n'
configs=(mtp mtp+schema none+schema)
[ -n "$BEFORE" ] && configs+=(before:mtp+schema)
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq "$REPS"); do
  for config in "${configs[@]}"; do
    bin=$BUILD
    [ "${config#before:}" != "$config" ] && bin=$BEFORE
    args=(-m "$TARGET" -n "$N" --temp 0 -t 2 -p "$PROMPT" --json)
    case "${config#before:}" in
      mtp) args+=(-md "$ASSISTANT" --spec-type mtp --draft-max 4 --no-adaptive) ;;
      mtp+schema) args+=(-md "$ASSISTANT" --spec-type mtp --draft-max 4 --no-adaptive --json-schema "$schema") ;;
      none+schema) args+=(--spec-type none --json-schema "$schema") ;;
    esac
    json=$("$bin/tandem" run "${args[@]}" 2>/dev/null)
    python3 - "$config" "$rep" "$json" <<'PY' | tee -a "$out"
import json, sys
c, rep, j = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
s = j["speculative"]
print(f"{c} rep{rep} {j['timings']['predicted_per_second']:.1f} tok/s, {len(j['tokens'])} tokens, "
      f"tokens/forward {s.get('tokens_per_target_forward', 1):.2f}, "
      f"forced {s.get('forced_accepted', 0)}/{s.get('forced', 0)}")
PY
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs, forced = collections.defaultdict(list), collections.defaultdict(lambda: [0, 0])
for line in open(sys.argv[1]):
    f = line.split()
    runs[f[0]].append(float(f[2]))
    a, d = f[-1].split("/")
    forced[f[0]][0] += int(a); forced[f[0]][1] += int(d)
mean = {k: statistics.mean(v) for k, v in runs.items()}
for c, v in runs.items():
    a, d = forced[c]
    rate = f"{a / d:.2f}" if d else "-"
    print(f"{c:18} mean {mean[c]:7.1f} tok/s  min {min(v):7.1f}  max {max(v):7.1f}  n {len(v)}  "
          f"forced accepted {a}/{d} ({rate})")
for c in mean:
    if c != "mtp":
        print(f"{c}/mtp {mean[c] / mean['mtp']:.2f}x")
PY
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(grep -o -m1 -w avx512f /proc/cpuinfo || echo 'no avx512f'); load average $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
