#!/usr/bin/env bash
# Prefill and decode, tandem against llama.cpp on the same GGUF file in one run (issue 14).
# Each round runs llama-bench, `tandem bench` (weights repacked, the default) and `tandem bench
# --no-repack` once, in a rotated order, so a drift of a shared machine's speed hits all alike;
# prints every run (tandem's with the bandwidth it measured in that run), then per configuration
# the median pp and tg tok/s, their range, and tandem's medians over llama.cpp's.
#
#   bench/pp_tg_vs_peer.sh BUILD PEER_RUN MODEL [ROUNDS] [PP] [TG] [THREADS]
#
# PEER_RUN: the peer's `bin/run` (see ../shared/peer/README.md). TANDEM_ISA is passed through,
# so TANDEM_ISA=avx2 measures the AVX2 path on an AVX-512 machine.
set -euo pipefail
BUILD=$1 PEER=$2 MODEL=$3 ROUNDS=${4:-3} PP=${5:-512} TG=${6:-64} THREADS=${7:-2}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), ISA path ${TANDEM_ISA:-default}," \
  "$THREADS threads, load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

peer() {
  "$PEER" llama-bench -m "$MODEL" -p "$PP" -n "$TG" -t "$THREADS" -r 1 2>/dev/null </dev/null |
    python3 -c "
import re, sys
pp = tg = None
for line in sys.stdin:
    m = re.search(r'\|\s+(pp|tg)(\d+)\s+\|\s+([\d.]+)', line)
    if m and m.group(1) == 'pp': pp = m.group(3)
    if m and m.group(1) == 'tg': tg = m.group(3)
if pp is None or tg is None: sys.exit('no pp/tg line from llama-bench')
print('llama.cpp', pp, tg)"
}
tandem() {  # NAME ARGS...
  local name=$1
  shift
  "$BUILD/tandem" bench -m "$MODEL" -p "$PP" -n "$TG" -r 1 -t "$THREADS" "$@" 2>&1 |
    python3 -c "
import re, sys
text = sys.stdin.read()
pp = re.search(r'^pp\d+\s+([\d.]+)', text, re.M)
tg = re.search(r'^tg\d+\s+([\d.]+) .*?= (\d+)% of membw', text, re.M)
bw = re.search(r'memory bandwidth ([\d.]+) GB/s', text)
if not (pp and tg and bw): sys.exit('no pp/tg lines from tandem bench:\n' + text[-2000:])
print('$name', pp.group(1), tg.group(1), 'membw', bw.group(1), 'tg_of_membw', tg.group(2) + '%')"
}

configs=(peer repack no-repack)
for ((r = 0; r < ROUNDS; r++)); do
  for ((i = 0; i < ${#configs[@]}; i++)); do
    c=${configs[$(((i + r) % ${#configs[@]}))]}
    case $c in
      peer) peer ;;
      repack) tandem repack ;;
      no-repack) tandem no-repack --no-repack ;;
    esac | tee -a "$out"
  done
done
python3 - "$out" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    runs.setdefault(f[0], []).append((float(f[1]), float(f[2])))
med = {k: (statistics.median(p for p, _ in v), statistics.median(t for _, t in v)) for k, v in runs.items()}
for k, v in runs.items():
    pps, tgs = [p for p, _ in v], [t for _, t in v]
    line = f"{k:10s} pp {med[k][0]:7.1f} ({min(pps):.1f}-{max(pps):.1f})  tg {med[k][1]:6.2f} ({min(tgs):.2f}-{max(tgs):.2f})"
    if k != 'llama.cpp' and 'llama.cpp' in med:
        line += f"  vs llama.cpp pp {med[k][0] / med['llama.cpp'][0]:.2f}x tg {med[k][1] / med['llama.cpp'][1]:.2f}x"
    print(line)
EOF
