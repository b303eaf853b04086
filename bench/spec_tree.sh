#!/usr/bin/env bash
# Draft trees against chains on a pair (default: the bundled trained pair), greedy: for each
# configuration, four Python-opening prompts of 256 tokens each through `tandem run`, summed:
# tokens, target forwards (rounds + plain steps), tokens per target forward, tok/s, verified rows
# per round (drafts + 1) and the tree's branch drafts. Compare a tree with the chain of about as
# many rows per round (equal verify rows) and with the fastest chain.
#
#   bench/spec_tree.sh BUILD [TARGET ASSISTANT] -- CONFIG...
#
# CONFIG: one quoted set of `tandem run` flags per configuration, e.g.
#   bench/spec_tree.sh build -- "--draft-max 4 --no-adaptive --draft-tree 2" \
#       "--draft-max 8 --no-adaptive" "--draft-max 3 --no-adaptive"
set -euo pipefail
BUILD=$1
shift
T=models/tandem-gemma4-tiny-Q8_0.gguf
A=models/tandem-gemma4-tiny-assistant-Q8_0.gguf
if [ "${1:-}" != "--" ]; then
  T=$1 A=$2
  shift 2
fi
shift  # --
prompts=(
  $'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'
  $'import os\nimport sys\n\n\nclass Config:\n    def __init__(self, path):\n'
  $'    for key, value in sorted(items.items()):\n        if value is None:\n'
  $'import os\n\n\ndef read_lines(path):\n    """Return the lines of the file at path."""\n'
)
for config in "$@"; do
  tok=0 fwd=0 rounds=0 drafted=0 branches=0 ms=0
  for p in "${prompts[@]}"; do
    # shellcheck disable=SC2086  # the configuration's flags split on purpose
    out=$("$BUILD/tandem" run -m "$T" -md "$A" -n 256 --temp 0 -t 2 --spec-type mtp $config \
      -p "$p" 2>&1 >/dev/null)
    gen=$(sed -n 's/^generated: \([0-9]*\) tokens in \([0-9.]*\) ms.*/\1 \2/p' <<<"$out")
    spec=$(sed -n 's/^speculative[^:]*: \([0-9]*\) rounds.* + \([0-9]*\) plain steps, drafted \([0-9]*\),.*/\1 \2 \3/p' <<<"$out")
    tree=$(sed -n 's/^draft trees: [0-9]* rounds, \([0-9]*\) branch.*/\1/p' <<<"$out")
    read -r g t <<<"$gen"
    read -r r s d <<<"$spec"
    tok=$((tok + g)) fwd=$((fwd + r + s)) rounds=$((rounds + r)) drafted=$((drafted + d))
    branches=$((branches + ${tree:-0}))
    ms=$(echo "$ms + $t" | bc)
  done
  printf '%-50s tokens %d, forwards %d, %.3f tokens per forward, %.1f tok/s, %.2f rows per round, %d branch drafts\n' \
    "$config" "$tok" "$fwd" "$(echo "scale=4; $tok / $fwd" | bc)" \
    "$(echo "scale=2; $tok * 1000 / $ms" | bc)" \
    "$(echo "scale=3; ($drafted + $rounds) / ($rounds + ($rounds == 0))" | bc)" "$branches"
done
