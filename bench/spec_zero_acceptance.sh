#!/usr/bin/env bash
# The cost side of issue 18: E2B-shaped random pair (`tandem mkmodel --config e2b --type q4_0`,
# and the same with --assistant: the assistant accepts ~nothing), plain vs mtp vs chain,
# interleaved, greedy; prints each run, then the means, the ratios to plain (targets: mtp and
# chain >= 0.97x plain) and the range of each run's same-run estimate against its own plain steps. Usage: bench/spec_zero_acceptance.sh BUILD TARGET ASSISTANT [REPS] [N]
set -euo pipefail
BUILD=$1 TARGET=$2 ASSISTANT=$3 REPS=${4:-3} N=${5:-48}
PROMPT="The quick brown fox jumps over the lazy dog."
out=$(mktemp)
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq "$REPS"); do
  for type in none mtp chain; do
    md=(-md "$ASSISTANT")
    [ "$type" = none ] && md=()
    "$BUILD/tandem" run -m "$TARGET" "${md[@]}" --spec-type "$type" -n "$N" --temp 0 -t 2 \
      -p "$PROMPT" --json 2>/dev/null |
      python3 -c "import json,sys; j=json.load(sys.stdin); s=j['speculative']; print('$type rep$rep', round(j['timings']['predicted_per_second'],2), 'tok/s; drafted', s['drafted'], 'accepted', s['accepted'], 'plain steps', s['plain_steps'], 'probes', s['probes'], 'same-run estimate', round(s['speedup_estimate'], 3))" |
      tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    runs[line.split()[0]].append(float(line.split()[2]))
est = collections.defaultdict(list)
for line in open(sys.argv[1]):
    est[line.split()[0]].append(float(line.split()[-1]))
mean = {t: statistics.mean(v) for t, v in runs.items()}
# tok/s ratios move with the machine's load; the same-run estimate (SpeculationStats::
# EstimatedSpeedup: tokens times this run's own plain-step time, over its draft and verify time)
# prices each run's drafting rounds at its own plain step, so it is what to read on a busy host.
for t, v in runs.items():
    print(f"{t:6} mean {mean[t]:6.2f} tok/s  min {min(v):6.2f}  max {max(v):6.2f}  n {len(v)}  "
          f"vs plain {mean[t] / mean['none']:.3f}x  same-run estimate {min(est[t]):.3f}-{max(est[t]):.3f}x")
PY
rm -f "$out"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(grep -o -m1 -w avx512f /proc/cpuinfo || echo 'no avx512f'); load average $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
