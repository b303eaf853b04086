#!/usr/bin/env bash
# MTP speculative decoding, tandem against llama.cpp's draft-mtp on the same GGUF pair, greedy,
# same prompt, in one run (issue 14: the echo pair, ~100 % acceptance, where drafting pays most).
# Each rep runs every configuration once, in a rotated order, so a drift of a shared machine's
# speed hits all alike; prints each run, then per configuration the median decode tok/s, its
# range, and the ratio of each tandem configuration's median to the best llama.cpp median.
#
#   bench/spec_vs_peer.sh BUILD PEER_RUN TARGET ASSISTANT [REPS] [N]
#
# PEER_RUN: the peer's `bin/run` (see ../shared/peer/README.md). The assistant must not carry
# the centroid head (llama.cpp cannot load it): `tandem mkmodel --assistant --centroids off`, or
# an echo assistant (`--echo-epsilon 0`, dense head). Configurations: tandem plain, MTP adaptive,
# MTP fixed at 4 and 8 (--no-adaptive); llama.cpp plain (llama-completion) and draft-mtp with
# --spec-draft-n-max 3 (its default), 8 and 12.
set -euo pipefail
BUILD=$1 PEER=$2 TARGET=$3 ASSISTANT=$4 REPS=${5:-3} N=${6:-64}
PROMPT="The quick brown fox jumps over the lazy dog."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

tandem() {  # NAME ARGS...: decode tok/s of one `tandem run`
  local name=$1
  shift
  "$BUILD/tandem" run -m "$TARGET" -n "$N" --temp 0 -t 2 -p "$PROMPT" --json "$@" 2>/dev/null |
    python3 -c "import json,sys; j=json.load(sys.stdin); s=j.get('speculative', {}); print('$name', round(j['timings']['predicted_per_second'], 2), 'drafted', s.get('drafted', 0), 'accepted', s.get('accepted', 0), 'rounds', s.get('rounds', 0))"
}
peer() {  # NAME PROGRAM ARGS...: llama.cpp's decode tok/s
  local name=$1 program=$2
  shift 2
  "$PEER" "$program" -m "$TARGET" -n "$N" --temp 0 -t 2 -p "$PROMPT" "$@" 2>&1 </dev/null |
    python3 -c "
import re, sys
text = sys.stdin.read()
m = re.search(r'decoded\s+\d+ tokens in\s+[\d.]+ seconds, speed:\s+([\d.]+) t/s', text) or \
    re.search(r'eval time =.*?([\d.]+) tokens per second', text.split('prompt eval time')[-1])
if not m: sys.exit('no speed in the output of $program:\n' + text[-2000:])
acc = re.search(r'accept\s+=\s+([\d.]+)%', text)
print('$name', m.group(1), 'accept', acc.group(1) + '%' if acc else '-')"
}

configs=(t-plain t-adaptive t-n4 t-n8 p-plain p-mtp3 p-mtp8 p-mtp12)
run() {
  case $1 in
    t-plain) tandem "$1" --spec-type none ;;
    t-adaptive) tandem "$1" -md "$ASSISTANT" --spec-type mtp ;;
    t-n4) tandem "$1" -md "$ASSISTANT" --spec-type mtp --no-adaptive --draft-max 4 ;;
    t-n8) tandem "$1" -md "$ASSISTANT" --spec-type mtp --no-adaptive --draft-max 8 ;;
    p-plain) peer "$1" llama-completion -no-cnv ;;
    p-mtp*) peer "$1" llama-speculative-simple -md "$ASSISTANT" --spec-type draft-mtp \
      --spec-draft-n-max "${1#p-mtp}" ;;
  esac
}
for rep in $(seq "$REPS"); do
  for i in "${!configs[@]}"; do
    run "${configs[$(((rep + i) % ${#configs[@]}))]}" | tee -a "$out"
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import collections, statistics, sys
tps = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w = line.split()
    tps[w[0]].append(float(w[1]))
med = {k: statistics.median(v) for k, v in tps.items()}
peer_best = max(v for k, v in med.items() if k.startswith('p-mtp'))
for k in sorted(tps):
    ratio = f"  vs best llama.cpp draft-mtp {med[k] / peer_best:.2f}x" if k.startswith('t-') else ''
    print(f"{k:11} median {med[k]:6.2f} tok/s (min {min(tps[k]):.2f} max {max(tps[k]):.2f}, "
          f"n {len(tps[k])}){ratio}")
PY
