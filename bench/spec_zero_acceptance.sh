#!/usr/bin/env bash
# The cost side of issue 18: E2B-shaped random pair (`tandem mkmodel --config e2b --type q4_0`,
# and the same with --assistant: the assistant accepts ~nothing), plain vs mtp vs chain,
# interleaved, greedy. Usage: bench/spec_zero_acceptance.sh BUILD TARGET ASSISTANT [REPS] [N]
set -euo pipefail
BUILD=$1 TARGET=$2 ASSISTANT=$3 REPS=${4:-3} N=${5:-48}
PROMPT="The quick brown fox jumps over the lazy dog."
for rep in $(seq "$REPS"); do
  for type in none mtp chain; do
    md=(-md "$ASSISTANT")
    [ "$type" = none ] && md=()
    "$BUILD/tandem" run -m "$TARGET" "${md[@]}" --spec-type "$type" -n "$N" --temp 0 -t 2 \
      -p "$PROMPT" --json 2>/dev/null |
      python3 -c "import json,sys; j=json.load(sys.stdin); s=j['speculative']; print('$type rep$rep', round(j['timings']['predicted_per_second'],2), 'tok/s; drafted', s['drafted'], 'accepted', s['accepted'], 'plain steps', s['plain_steps'])"
  done
done
