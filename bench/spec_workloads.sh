#!/usr/bin/env bash
# Speculative workloads of issue 18, interleaved (each repetition runs every configuration once,
# in an order rotated per repetition, so a drift of a shared machine's speed hits all alike).
# Prints one line per run and, at the end, the median, mean and spread of the decode tok/s per
# workload and configuration, and the ratios of the medians (on a loaded VM single runs spread
# 2-5x: use many repetitions), and the median same-run estimate
# (SpeculationStats::EstimatedSpeedup: the run's tokens at its own plain-step time over its
# planning, drafting and verifying time), which a neighbour's load moves less.
#
#   [THREADS=N] bench/spec_workloads.sh [BUILD] [REPS] [TARGET ASSISTANT]
#
# THREADS (default 2): the bundled pair is a 7 MB compute-bound model; on the 2-vCPU Zen 5 VM its
# plain decoding ran 2-3.5x slower with 2 threads than with 1 over 256 tokens (0.8-0.9x over
# 2000: the second vCPU is slow to come up after idling), so THREADS=1 measures the drafters and
# not that.
#
# Workloads (greedy):
#   copy: a source file (tools/train/centroids.py, 843 tokens), then a comment asking for the
#         same module with a function renamed, then its first line: the continuation mostly
#         copies the prompt; COPY_N tokens (default 900: the whole module reproduced);
#   free: free continuation of a short code prompt (the `make run` prompt); FREE_N tokens
#         (default 256).
# Configurations: none (plain), mtp (the assistant alone), chain (prompt lookup + assistant),
# ngram (prompt lookup alone); all adaptive, --draft-max 16.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
REPS=${2:-3}
TARGET=${3:-models/tandem-gemma4-tiny-Q8_0.gguf}
ASSISTANT=${4:-models/tandem-gemma4-tiny-assistant-Q8_0.gguf}
SRC=tools/train/centroids.py
COPY_PROMPT="$(cat "$SRC")

# The same module again, with balanced_assign renamed to assign_balanced:

$(head -n 1 "$SRC")"
FREE_PROMPT=$'import os\n\n\ndef read_lines(path):\n    """Return the lines of the file at path."""\n'
out=$(mktemp)
echo "threads ${THREADS:-2}; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
types=(none mtp chain ngram)
for rep in $(seq "$REPS"); do
  for workload in copy free; do
    prompt=$COPY_PROMPT
    [ "$workload" = free ] && prompt=$FREE_PROMPT
    # The order rotates per repetition: a configuration does not always follow the same one.
    for i in 0 1 2 3; do
      type=${types[$(((i + rep - 1) % 4))]}
      md=(-md "$ASSISTANT")
      [ "$type" = ngram ] || [ "$type" = none ] && md=()
      n=${COPY_N:-900}
      [ "$workload" = free ] && n=${FREE_N:-256}
      json=$("$BUILD/tandem" run -m "$TARGET" "${md[@]}" --spec-type "$type" -n "$n" --temp 0 \
        --draft-max 16 -t "${THREADS:-2}" -p "$prompt" --json 2>/dev/null)
      python3 - "$workload" "$type" "$rep" "$json" <<'PY' | tee -a "$out"
import json, sys
w, t, rep, j = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
s = j["speculative"]
src = s.get("by_source", {})
ng, mo = src.get("ngram", {}), src.get("model", {})
print(f"{w} {t} rep{rep} {j['timings']['predicted_per_second']:.1f} tok/s, "
      f"{len(j['tokens'])} tokens, tokens/forward {s['tokens_per_target_forward']:.2f}, "
      f"rounds {s['rounds']}, plain {s['plain_steps']}, "
      f"ngram {ng.get('accepted', 0)}/{ng.get('drafted', 0)}, model {mo.get('accepted', 0)}/{mo.get('drafted', 0)}, "
      f"probes {s['probes']}, same-run estimate {s['speedup_estimate']:.3f}")
PY
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs, est = collections.defaultdict(list), collections.defaultdict(list)
by_rep = collections.defaultdict(dict)  # (workload, rep) -> type -> tok/s
for line in open(sys.argv[1]):
    w, t, rep, tps = line.split()[:4]
    runs[(w, t)].append(float(tps))
    est[(w, t)].append(float(line.split()[-1]))
    by_rep[(w, rep)][t] = float(tps)
mean = {k: statistics.mean(v) for k, v in runs.items()}
med = {k: statistics.median(v) for k, v in runs.items()}
for (w, t), v in runs.items():
    print(f"{w:5} {t:6} median {med[(w, t)]:7.1f} tok/s  mean {mean[(w, t)]:7.1f}  min {min(v):7.1f}  max {max(v):7.1f}  n {len(v)}  "
          f"same-run estimate median {statistics.median(est[(w, t)]):.3f}")
# The issue 18 targets, as same-run ratios of the medians.
for w in sorted({w for w, _ in runs}):
    get = lambda t: med.get((w, t), float("nan"))
    best = max(("mtp", "ngram"), key=get)
    print(f"{w:5} chain/mtp {get('chain') / get('mtp'):.2f}x  chain/none {get('chain') / get('none'):.2f}x  "
          f"ngram/none {get('ngram') / get('none'):.2f}x  chain/best single ({best}) {get('chain') / get(best):.2f}x")
    # Per repetition (the four runs of one repetition are seconds apart: a drift of the VM's
    # speed between minutes cancels), the median of each ratio and its spread.
    for a, b in (("chain", "mtp"), ("chain", "ngram"), ("mtp", "none"), ("chain", "none")):
        r = sorted(v[a] / v[b] for (rw, _), v in by_rep.items() if rw == w and a in v and b in v)
        if r:
            print(f"{w:5} per repetition {a}/{b} median {statistics.median(r):.2f}x ({r[0]:.2f}-{r[-1]:.2f})")
PY
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(grep -o -m1 -w avx512f /proc/cpuinfo || echo 'no avx512f'); load average $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
rm -f "$out"
