#!/usr/bin/env bash
# The cost side of issue 18: E2B-shaped random pair (`tandem mkmodel --config e2b --type q4_0`,
# and the same with --assistant: the assistant accepts ~nothing), plain vs mtp vs chain, greedy.
# Each rep runs the three configurations in a rotated order (so none always runs first or after
# the same neighbour); prints each run, then per configuration the median tok/s and its ratio to
# plain's median, the median plain-step ms (the engine's own timing of its single-row forwards:
# a loaded assistant that slowed the target's steps would show here) and the range of the
# same-run estimate (SpeculationStats::EstimatedSpeedup: this run's tokens at its own plain-step
# time over what it spent drafting, verifying and planning). On a shared VM the tok/s ratios move
# with the neighbours' load by more than the effect; the same-run estimate and the plain-step
# ms are what to read, and the per-repetition ratios' medians. With the echo pair (~100 %
# acceptance) it is the other side: chain against the assistant alone where the assistant wins.
# Usage: bench/spec_zero_acceptance.sh BUILD TARGET ASSISTANT [REPS] [N]
set -euo pipefail
BUILD=$1 TARGET=$2 ASSISTANT=$3 REPS=${4:-5} N=${5:-64}
PROMPT="The quick brown fox jumps over the lazy dog."
out=$(mktemp)
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
types=(none mtp chain)
for rep in $(seq "$REPS"); do
  for i in 0 1 2; do
    type=${types[$(((rep + i) % 3))]}
    md=(-md "$ASSISTANT")
    [ "$type" = none ] && md=()
    "$BUILD/tandem" run -m "$TARGET" "${md[@]}" --spec-type "$type" -n "$N" --temp 0 -t 2 \
      -p "$PROMPT" --json 2>/dev/null |
      python3 -c "import json,sys; j=json.load(sys.stdin); s=j['speculative']; print('$type rep$rep', round(j['timings']['predicted_per_second'],2), 'tok/s; drafted', s['drafted'], 'accepted', s['accepted'], 'rounds', s['rounds'], 'plain steps', s['plain_steps'], 'plain-step ms', round(s['plain_ms'] / max(1, s['plain_steps']), 2), 'plan ms', round(s.get('plan_ms', 0), 2), 'probes', s['probes'], 'same-run estimate', round(s['speedup_estimate'], 3))" |
      tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
tps, step, est = (collections.defaultdict(list) for _ in range(3))
by_rep = collections.defaultdict(dict)  # rep -> type -> tok/s
for line in open(sys.argv[1]):
    w = line.split()
    tps[w[0]].append(float(w[2]))
    by_rep[w[1]][w[0]] = float(w[2])
    step[w[0]].append(float(w[w.index('plain-step') + 2]))
    est[w[0]].append(float(w[-1]))
med = {t: statistics.median(v) for t, v in tps.items()}
for t in tps:
    print(f"{t:6} median {med[t]:6.2f} tok/s (min {min(tps[t]):.2f} max {max(tps[t]):.2f}, "
          f"n {len(tps[t])})  vs plain {med[t] / med['none']:.3f}x  "
          f"median plain-step {statistics.median(step[t]):.2f} ms "
          f"(vs plain {statistics.median(step[t]) / statistics.median(step['none']):.3f}x)  "
          f"same-run estimate {min(est[t]):.3f}-{max(est[t]):.3f}x "
          f"(median {statistics.median(est[t]):.3f})")
# Per repetition (its runs are seconds apart: a drift of the VM's speed between minutes cancels).
for a, b in (("mtp", "none"), ("chain", "none"), ("chain", "mtp")):
    r = sorted(v[a] / v[b] for v in by_rep.values() if a in v and b in v)
    if r:
        print(f"per repetition {a}/{b} median {statistics.median(r):.3f}x ({r[0]:.3f}-{r[-1]:.3f})")
PY
rm -f "$out"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(grep -o -m1 -w avx512f /proc/cpuinfo || echo 'no avx512f'); load average $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
