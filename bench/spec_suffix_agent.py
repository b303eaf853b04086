#!/usr/bin/env python3
"""Suffix drafting on repeated agent turns (issue 45, item 2): lookup + MTP against suffix +
lookup + MTP, on the bundled trained pair, through `tandem serve` over HTTP.

The workload is what an agent loop sends a stateless completion endpoint, turn after turn, each
turn a fresh prompt (so prompt lookup never sees an earlier turn's output):
  - files re-emitted with small edits: three Python sources, each asked for again in every round
    with one line of its header changed (a renamed parameter, another default), the model
    continuing the body;
  - tool calls whose arguments recur: a call line with one of a few argument sets, the model
    continuing after it.
Every request is greedy (the output is the plain output either way) and carries the same API key
(one tenant). The two servers, `--spec-type chain` (prompt lookup, then the MTP assistant) and
`--spec-type suffix-chain` (suffix drafting or lookup, then the assistant), run side by side;
each turn goes to both, in an order alternated per turn, so a drift of a shared machine's speed
hits both alike. Printed: each configuration's decode tokens per second over all turns (sum of
tokens over sum of decode time, from the responses' timings), over the turns after the first
round (the index warm), the same-run ratio, and the suffix counters of /metrics.

  bench/spec_suffix_agent.py [--build build] [--rounds 6] [--threads 1] [--port 18460]
"""
import argparse
import os
import subprocess
import tempfile

import serve_util
from serve_util import wait_ready

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "models/tandem-gemma4-tiny-Q8_0.gguf")
ASSISTANT = os.path.join(ROOT, "models/tandem-gemma4-tiny-assistant-Q8_0.gguf")
KEY = "bench-agent"

# Files an agent keeps re-emitting; {edit} is the line that changes from round to round.
FILES = [
    'import os\n\n\ndef read_lines(path, {edit}):\n    """Return the lines of the file at path."""\n',
    'import json\n\n\nclass Config:\n    """Settings read from a JSON file."""\n\n'
    '    def __init__(self, path, {edit}):\n',
    'import re\n\n\ndef split_words(text, {edit}):\n    """Split text into words."""\n',
]
EDITS = ["encoding='utf-8'", "encoding=None", "strip=True", "strip=False", "limit=100",
         "limit=None"]
# Tool calls whose arguments recur (a few argument sets, cycled).
TOOL = ('import subprocess\n\n\ndef run_tool(args):\n    """Run one tool call."""\n'
        '    result = subprocess.run({args}, capture_output=True, text=True)\n')
TOOL_ARGS = ["['git', 'status']", "['ls', '-la', path]", "['git', 'diff', '--stat']"]


def turns(rounds):
    """The prompts of each round, in order."""
    out = []
    for r in range(rounds):
        batch = [f.replace("{edit}", EDITS[(r + i) % len(EDITS)]) for i, f in enumerate(FILES)]
        batch.append(TOOL.replace("{args}", TOOL_ARGS[r % len(TOOL_ARGS)]))
        out.append(batch)
    return out


def post(port, path, body):
    return serve_util.post(port, path, body, KEY, timeout=600)


def get(port, path):
    return serve_util.get(port, path, KEY)


def suffix_metrics(port):
    keep = []
    for line in get(port, "/metrics").splitlines():
        if 'source="suffix"' in line and "_tokens_total" in line:
            keep.append(line.replace("tandem_spec_source_", ""))
    return " ".join(keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--port", type=int, default=18460)
    ap.add_argument("--max-tokens", type=int, default=160)
    a = ap.parse_args()
    binary = os.path.join(ROOT, a.build, "tandem")
    configs = [("lookup+mtp", "chain"), ("suffix+lookup+mtp", "suffix-chain")]
    procs, logs = [], []
    try:
        for i, (_, spec) in enumerate(configs):
            log = tempfile.NamedTemporaryFile(delete=False, suffix=".log").name
            logs.append(log)
            procs.append(subprocess.Popen(
                [binary, "serve", "-m", TARGET, "-md", ASSISTANT, "--spec-type", spec,
                 "-t", str(a.threads), "--port", str(a.port + i)],
                stdout=open(log, "w"), stderr=subprocess.STDOUT))
        for i, p in enumerate(procs):
            wait_ready(a.port + i, p, logs[i])
        print(f"load average at the start: {open('/proc/loadavg').read().split()[:3]}")
        # [config] -> [(round, tokens, ms)]
        runs = {name: [] for name, _ in configs}
        texts = {name: [] for name, _ in configs}
        n = 0
        for r, batch in enumerate(turns(a.rounds)):
            for prompt in batch:
                order = list(range(len(configs)))
                if n % 2:
                    order.reverse()
                n += 1
                for i in order:
                    name = configs[i][0]
                    j = post(a.port + i, "/v1/completions", {
                        "prompt": prompt, "max_tokens": a.max_tokens, "temperature": 0})
                    t = j["timings"]
                    runs[name].append((r, t["predicted_n"], t["predicted_ms"]))
                    texts[name].append(j["choices"][0]["text"])
        if texts[configs[0][0]] != texts[configs[1][0]]:
            print("WARNING: the two configurations' outputs differ (greedy must be identical)")
        rate = {}
        for name, _ in configs:
            rows = runs[name]
            tok = sum(x[1] for x in rows)
            ms = sum(x[2] for x in rows)
            warm = [x for x in rows if x[0] > 0]
            wtok, wms = sum(x[1] for x in warm), sum(x[2] for x in warm)
            rate[name] = (tok * 1000 / ms, wtok * 1000 / wms if wms else 0.0)
            print(f"{name:18} {rate[name][0]:7.1f} tok/s over {len(rows)} turns "
                  f"({tok} tokens); after round 1: {rate[name][1]:7.1f} tok/s")
        base, new = rate[configs[0][0]], rate[configs[1][0]]
        print(f"suffix+lookup+mtp / lookup+mtp: {new[0] / base[0]:.2f}x all turns, "
              f"{new[1] / base[1]:.2f}x after round 1")
        print("suffix /metrics: " + suffix_metrics(a.port + 1))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        for log in logs:
            os.unlink(log)


if __name__ == "__main__":
    main()
