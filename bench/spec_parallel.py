#!/usr/bin/env python3
"""Speculation under concurrency (issue 45, item 1): `tandem serve --parallel P` with P
simultaneous requests, speculation on against speculation off, on the same target file.

Two servers run side by side, one with the assistant (`-md`, the server's default speculation)
and one with `--spec-type none`; each round sends P greedy /v1/completions requests at once to
one server, then to the other (the order alternated per round, so a drift of a shared machine's
speed hits both alike). Printed: each round's aggregate tokens per second (all P requests'
tokens over the wall time from the first send to the last answer), each configuration's median,
the same-run ratio, and the speculative stats the responses report.

  bench/spec_parallel.py TARGET ASSISTANT [--parallel 4] [--rounds 3] [--max-tokens 64]
                         [--threads 2] [--build build] [--port 18470]

With an assistant that is never right (`tandem mkmodel --assistant`, random) the ratio is the
cost of speculating in a batch; with the echo pair (`--echo-epsilon 0` for both) its upper end.
"""
import argparse
import concurrent.futures
import os
import statistics
import subprocess
import tempfile
import time

from serve_util import get, post, wait_ready

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPTS = [
    "The history of the bicycle begins",
    "A recipe for bread needs flour,",
    "In the year 1900 the city of",
    "Rivers carry water from the mountains",
    "The committee met on Tuesday to discuss",
    "Light travels through a vacuum at",
    "When the train left the station,",
    "The museum's new wing holds",
]


def burst(port, n, max_tokens, offset):
    """n requests at once; returns (tokens, seconds, responses)."""
    bodies = [{"prompt": PROMPTS[(offset + i) % len(PROMPTS)], "max_tokens": max_tokens,
               "temperature": 0, "ignore_eos": True} for i in range(n)]
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        out = list(pool.map(lambda b: post(port, "/v1/completions", b), bodies))
    seconds = time.perf_counter() - t0
    return sum(j["usage"]["completion_tokens"] for j in out), seconds, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target")
    ap.add_argument("assistant")
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--build", default="build")
    ap.add_argument("--port", type=int, default=18470)
    a = ap.parse_args()
    binary = os.path.join(ROOT, a.build, "tandem")
    configs = [("speculation off", ["--spec-type", "none"]), ("speculation on", [])]
    procs, logs = [], []
    try:
        for i, (_, extra) in enumerate(configs):
            log = tempfile.NamedTemporaryFile(delete=False, suffix=".log").name
            logs.append(log)
            procs.append(subprocess.Popen(
                [binary, "serve", "-m", a.target, "-md", a.assistant, "--parallel",
                 str(a.parallel), "-t", str(a.threads), "--port", str(a.port + i)] + extra,
                stdout=open(log, "w"), stderr=subprocess.STDOUT))
        for i, p in enumerate(procs):
            wait_ready(a.port + i, p, logs[i])
        cpu = [l for l in open("/proc/cpuinfo") if l.startswith("model name")][0].split(":")[1]
        print(f"{cpu.strip()}, {a.threads} threads, --parallel {a.parallel}, "
              f"load average at the start: {open('/proc/loadavg').read().split()[:3]}")
        rates = {name: [] for name, _ in configs}
        texts = {name: [] for name, _ in configs}
        last = {}
        for r in range(a.rounds):
            order = list(range(len(configs)))
            if r % 2:
                order.reverse()
            for i in order:
                name = configs[i][0]
                tokens, seconds, out = burst(a.port + i, a.parallel, a.max_tokens, r)
                rates[name].append(tokens / seconds)
                texts[name].append([j["choices"][0]["text"] for j in out])
                last[name] = out
                print(f"round {r + 1} {name:16} {tokens} tokens in {seconds:6.2f} s: "
                      f"{tokens / seconds:7.2f} tok/s")
        if texts[configs[0][0]] != texts[configs[1][0]]:
            print("WARNING: the outputs differ (greedy must be identical)")
        med = {name: statistics.median(v) for name, v in rates.items()}
        for name, _ in configs:
            print(f"{name:16} median {med[name]:7.2f} tok/s (range {min(rates[name]):.2f}-"
                  f"{max(rates[name]):.2f})")
        print(f"on / off: {med['speculation on'] / med['speculation off']:.2f}x")
        if a.rounds > 2:
            # From the second round on, every slot starts from what its last request measured
            # (a greedy request continues the planner's estimates: SpeculativeRound::Start).
            warm = {name: statistics.median(v[1:]) for name, v in rates.items()}
            print(f"on / off after the first round: "
                  f"{warm['speculation on'] / warm['speculation off']:.2f}x "
                  f"({warm['speculation on']:.2f} / {warm['speculation off']:.2f} tok/s)")
        spec = [j["timings"].get("speculative", {}) for j in last["speculation on"]]
        acc = [s.get("acceptance_rate") for s in spec]
        tpf = [s.get("tokens_per_target_forward") for s in spec]
        print(f"last round, per request: acceptance {acc}, tokens per target forward {tpf}")
        print(f"last round, the first request's speculative stats: {spec[0]}")
        # The planners' choices by the count of generating slots in a step, over every round.
        on_port = a.port + [name for name, _ in configs].index("speculation on")
        for line in get(on_port, "/metrics").splitlines():
            if line.startswith("tandem_spec_batch_"):
                print(line)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        for log in logs:
            os.unlink(log)


if __name__ == "__main__":
    main()
