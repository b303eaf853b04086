#!/usr/bin/env python3
"""End-to-end tests of `tandem run` (and `tandem transcribe`) on generated fixture models: greedy
output is reproducible and identical with and without MTP speculation (after images and audio
too), stop strings are honoured, sampling is reproducible from the seed, flags that cannot act
are warned about, and errors give a clear message and a non-zero exit code. Usage: run_cli_test.py TANDEM_BINARY WORK_DIR"""
import json
import os
import re
import subprocess
import sys

TANDEM, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
TARGET = os.path.join(WORK, "cli-target.gguf")
ASSISTANT = os.path.join(WORK, "cli-assistant.gguf")
PROMPT = "The people who built the model wanted to know the answer."
passed = failed = 0


def tandem(*args, check=True):
    r = subprocess.run([TANDEM, *args], capture_output=True, text=True, errors="replace",
                       timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"tandem {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r


def run_json(*args):
    return json.loads(tandem("run", "-m", TARGET, "-p", PROMPT, "--json", *args).stdout)


def case(fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok   {fn.__name__}")
    except AssertionError as e:
        failed += 1
        print(f"FAIL {fn.__name__}: {e}")


def greedy_is_reproducible_and_identical_with_speculation():
    a = run_json("-n", "48", "--temp", "0")
    b = run_json("-n", "48", "--temp", "0")
    assert a["tokens"] == b["tokens"], "two greedy runs differ"
    assert len(a["tokens"]) == 48 and a["stop_reason"] == "length", a["stop_reason"]
    for n in ("1", "4", "9"):
        s = run_json("-n", "48", "--temp", "0", "-md", ASSISTANT, "--draft-max", n, "--no-adaptive")
        assert s["tokens"] == a["tokens"], f"--draft-max {n} changed greedy output"
        assert s["speculative"]["enabled"] and s["speculative"]["drafted"] > 0, s["speculative"]
    for key in ("load_ms", "prompt_n", "prompt_per_second", "predicted_n", "predicted_per_second"):
        assert key in a["timings"], f"timings.{key} missing"
    for key in ("drafted", "accepted", "acceptance_by_position", "rounds", "mean_accepted_length",
                "tokens_per_target_forward", "draft_ms", "verify_ms", "repetition_share",
                "speedup_estimate"):
        assert key in s["speculative"], f"speculative.{key} missing"


def stop_strings_are_honoured():
    text = run_json("-n", "48", "--temp", "0")["text"]
    ascii_text = text.encode("ascii", "ignore").decode()
    stop = ascii_text[len(ascii_text) // 2: len(ascii_text) // 2 + 3]
    assert len(stop) == 3 and stop in text, f"no usable stop string in {text!r}"
    r = run_json("-n", "48", "--temp", "0", "--stop", stop)
    assert r["stop_reason"] == "stop", r["stop_reason"]
    assert stop not in r["text"], "the stop string was emitted"
    assert text.startswith(r["text"]), "text before the stop string differs"


def sampling_is_reproducible_from_the_seed():
    args = ("-n", "32", "--temp", "0.9", "-s", "42", "-md", ASSISTANT)
    assert run_json(*args)["tokens"] == run_json(*args)["tokens"]
    assert run_json(*args)["tokens"] != run_json("-n", "32", "--temp", "0.9", "-s", "43")["tokens"]


def flags_without_effect_are_warned():
    r = tandem("run", "-m", TARGET, "-p", PROMPT, "-n", "4", "--draft-max", "3")
    assert "warning: draft flags have no effect" in r.stderr, r.stderr
    r = tandem("run", "-m", TARGET, "-md", ASSISTANT, "--spec-type", "none", "-p", PROMPT, "-n", "4")
    assert "speculation is off" in r.stderr, r.stderr
    # Prompt lookup runs in the round: greedy output as plain, chained or alone, and the
    # report gives the acceptance by source.
    plain = run_json("-n", "24", "--temp", "0")["tokens"]
    for args in (("--spec-type", "ngram"), ("-md", ASSISTANT, "--spec-type", "chain"),
                 ("-md", ASSISTANT)):
        r = run_json("-n", "24", "--temp", "0", "--no-adaptive", "--draft-max", "8", *args)
        assert r["tokens"] == plain, args
        assert "by_source" in r["speculative"], r
    r = tandem("run", "-m", TARGET, "-md", ASSISTANT, "--spec-type", "chain", "-p", PROMPT + PROMPT,
               "-n", "16", "--temp", "0", "--no-adaptive")
    assert "warning" not in r.stderr, r.stderr
    r = tandem("run", "-m", TARGET, "--spec-ngram-min", "5", "--spec-ngram-max", "4", "-p", "x",
               check=False)
    assert r.returncode == 1 and "--spec-ngram-min/max" in r.stderr, r.stderr


def errors_are_clear():
    r = tandem("run", "-m", os.path.join(WORK, "missing.gguf"), "-p", "x", check=False)
    assert r.returncode != 0 and "missing.gguf" in r.stderr, r.stderr
    corrupt = os.path.join(WORK, "corrupt.gguf")
    with open(TARGET, "rb") as src, open(corrupt, "wb") as dst:
        dst.write(src.read()[:1000])
    r = tandem("run", "-m", corrupt, "-p", "x", check=False)
    assert r.returncode == 1 and "corrupt.gguf" in r.stderr, r.stderr
    r = tandem("run", "-m", TARGET, "-p", "x", "--no-such-flag", check=False)
    assert r.returncode != 0, "unknown flag accepted"
    r = tandem("run", "-m", TARGET, "-p", PROMPT * 20, "-c", "64", check=False)
    assert r.returncode == 1 and "context" in r.stderr, r.stderr
    r = tandem("run", "-m", TARGET, "-p", "x", "-ctk", "q8_0", "-ctv", "f16", check=False)
    assert r.returncode == 1 and "-ctv" in r.stderr, r.stderr
    r = tandem("run", "-m", TARGET, "-p", "x", "--top-p", "1.5", check=False)
    assert r.returncode == 1 and "top_p" in r.stderr, r.stderr


def bench_reports_every_section():
    spec = ("-m", TARGET, "-md", ASSISTANT, "--spec", "-p", "16", "-n", "8", "-r", "1",
            "--draft-lengths", "1,2")
    r = tandem("bench", *spec, "--synthetic-acceptance", "")
    for text in ("pp16", "tg8", "resident", "n=1", "n=2", "adaptive", "verify cost"):
        assert text in r.stdout, f"{text!r} missing from:\n{r.stdout}"
    assert "synthetic" not in r.stdout and "rror" not in r.stderr, r.stdout + r.stderr
    j = json.loads(tandem("bench", *spec, "--synthetic-acceptance", "0.7", "--json").stdout)
    assert j["tg"]["resident_bytes"] > 0 and j["tg"]["kv_bytes"] > 0, j["tg"]
    # Each decode run against the probes next to it; never more than the run's bytes over them.
    tg, best = j["tg"], j["membw_gb_s"] * 1e9
    assert 0 < tg["fraction_of_adjacent_membw"], tg
    assert tg["fraction_of_adjacent_membw"] >= tg["fraction_of_membw"] * (1 - 1e-9), (tg, best)
    costs = j["spec"]["verify_cost_vs_t1"]
    assert len(costs) == 16 and costs[0] == 1.0, costs
    ms = j["spec"]["verify_ms_by_rows"]
    assert all(abs(c - m / ms[0]) < 1e-9 for c, m in zip(costs, ms)), f"not ratios: {costs} {ms}"
    assert sorted(j["spec"]["fixed"]) == ["1", "2"], j["spec"]["fixed"].keys()
    synthetic = j["spec"]["synthetic"]["0.70"]
    assert synthetic["best_fixed"] == max(synthetic["fixed"].values()), synthetic
    # At a depth (llama-bench -d): the depth is prefilled untimed and served by the cache, so the
    # timed prefill evaluates the prompt (and at most the depth's last token again); the context
    # grows to hold it (-c 64 here is too small for 96 + 16).
    j = json.loads(tandem("bench", "-m", TARGET, "-p", "16", "-n", "4", "-d", "96", "-r", "1",
                          "-c", "64", "--json").stdout)
    assert j["depth"] == 96 and j["pp"]["tokens_timed"] in (16, 17), j["pp"]
    r = tandem("bench", "-m", TARGET, "-p", "8", "-n", "4", "-d", "32", "-r", "1")
    assert "pp8 @ d32" in r.stdout and "tg4 @ d32" in r.stdout, r.stdout
    # The --spec runs too: each generates after the depth, which the cache serves (prefilled
    # once); the context grows to hold depth, prompt, generation and a draft (-c 32 is too small).
    depth_spec = ("-m", TARGET, "-md", ASSISTANT, "--spec", "-p", "0", "-n", "4", "-d", "40",
                  "-r", "2", "-c", "32", "--draft-lengths", "1", "--synthetic-acceptance", "")
    j = json.loads(tandem("bench", *depth_spec, "--json").stdout)["spec"]
    assert j["depth"] == 40 and j["prompt_tokens"] == 40 + 32, j
    for run in (j["fixed"]["1"], j["adaptive"]):
        assert run["cached_prompt_tokens"] == j["prompt_tokens"] - 1, run
    r = tandem("bench", *depth_spec)
    assert "speculative (tg4 @ d40, greedy)" in r.stdout and "rror" not in r.stderr, r.stdout
    r = tandem("bench", "-m", TARGET, "-d", "-1", check=False)
    assert r.returncode != 0 and "n-depth" in r.stderr, r.stderr


def mmproj_is_written_and_inspected():
    mmproj = os.path.join(WORK, "cli-mmproj.gguf")
    tandem("mkmodel", "--config", "tiny-e2b", "--mmproj", "--type", "q8_0", "-o", mmproj)
    text = tandem("inspect", mmproj).stdout
    # An E-series config: both towers in one file, as llama.cpp's converter writes it.
    for want in ("multimodal projector (mmproj): vision gemma4v, audio gemma4a", '"clip"',
                 "clip.vision.projector_type", "clip.vision.projection_dim", "v.blk.1.ffn_down",
                 "mm.input_projection.weight", "clip.audio.projector_type",
                 "clip.audio.num_mel_bins", "a.blk.1.conv_dw.weight",
                 "mm.a.input_projection.weight"):
        assert want in text, f"{want!r} missing from:\n{text}"
    j = json.loads(tandem("inspect", "--json", mmproj).stdout)
    assert j["mmproj"] == "vision gemma4v, audio gemma4a", j.get("mmproj")
    meta = j["metadata"]
    assert meta["general.architecture"]["value"] == "clip", meta["general.architecture"]
    assert meta["clip.vision.projection_dim"] == {"type": "u32", "value": 128}, meta
    assert meta["clip.vision.attention.layer_norm_epsilon"]["type"] == "f32", meta
    assert "clip.use_gelu" not in meta, "llama.cpp's converter does not write clip.use_gelu"
    types = {t["name"]: t["type"] for t in j["tensors"]}
    assert types["v.blk.0.attn_q.weight"] == "q8_0" and types["v.patch_embd.weight"] == "f32"
    assert types["v.position_embd.weight"] == "f32" and types["v.blk.0.ln1.weight"] == "f32"
    assert types["a.blk.0.attn_q.weight"] == "q8_0" and types["a.blk.0.conv_dw.weight"] == "f32"
    assert meta["clip.audio.projection_dim"] == {"type": "u32", "value": 128}, meta
    # The 26B/31B checkpoints have no audio tower.
    wide = os.path.join(WORK, "cli-mmproj-wide.gguf")
    tandem("mkmodel", "--config", "tiny", "--mmproj", "--projection-dim", "256", "-o", wide)
    text = tandem("inspect", wide).stdout
    for key in ("clip.vision.projection_dim", "clip.audio.projection_dim"):
        assert re.search(key + r"\s+u32\s+256\b", text), (key, text)
    r = tandem("mkmodel", "--config", "tiny", "--projection-dim", "256", "-o", wide, check=False)
    assert r.returncode != 0 and "--projection-dim needs --mmproj" in r.stderr, r.stderr
    vision_only = os.path.join(WORK, "cli-mmproj-31b.gguf")
    tandem("mkmodel", "--config", "tiny-31b", "--mmproj", "-o", vision_only)
    assert json.loads(tandem("inspect", "--json", vision_only).stdout)["mmproj"] == "vision gemma4v"
    assert "mmproj" not in json.loads(tandem("inspect", "--json", TARGET).stdout)
    gelu = os.path.join(WORK, "cli-mmproj-gelu.gguf")
    tandem("mkmodel", "--config", "tiny", "--mmproj", "--clip-use-gelu", "-o", gelu)
    meta = json.loads(tandem("inspect", "--json", gelu).stdout)["metadata"]
    assert meta["clip.use_gelu"] == {"type": "bool", "value": True}, meta.get("clip.use_gelu")
    r = tandem("mkmodel", "--config", "12b", "--mmproj", "-o", gelu, check=False)
    assert r.returncode == 1 and "unknown vision config '12b'" in r.stderr, r.stderr
    r = tandem("mkmodel", "--config", "e2b", "--mmproj", "--assistant", "-o", gelu, check=False)
    assert r.returncode == 1 and "exclude each other" in r.stderr, r.stderr


def quantized_mix_is_inspected():
    f32 = os.path.join(WORK, "cli-target-f32.gguf")
    q3 = os.path.join(WORK, "cli-target-q3_k_m.gguf")
    tandem("mkmodel", "--config", "tiny-e2b", "--type", "f32", "-o", f32)
    tandem("quantize", f32, q3, "q3_k_m", "--no-progress")
    j = json.loads(tandem("inspect", "--json", q3).stdout)
    assert j["file_type"] == "12 (Q3_K_M)", j.get("file_type")
    counts = {}
    for t in j["tensors"]:
        counts[t["type"]] = counts.get(t["type"], 0) + 1
    assert j["tensor_types"] == counts, (j["tensor_types"], counts)
    # tiny-e2b's 256-wide ffn_down rows stay Q4_K (Q5_K on the first layer, n/16 = 0 here).
    assert counts.get("q4_K", 0) > 0 and counts.get("f32", 0) > 0, counts
    text = tandem("inspect", q3).stdout
    assert "file type: 12 (Q3_K_M)" in text, text
    mix = ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))
    assert f"tensor types: {mix}" in text, (mix, text)
    j = json.loads(tandem("inspect", "--json", f32).stdout)
    assert j["file_type"] == "0 (ALL_F32)" and j["tensor_types"] == {"f32": len(j["tensors"])}, j


def png_bytes(width, height, seed):
    """A small RGB PNG written with the standard library (zlib), pixels from a seeded LCG."""
    import struct
    import zlib
    rows, x = b"", seed
    for _ in range(height):
        row = bytearray([0])
        for _ in range(width * 3):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            row.append(x >> 23)
        rows += bytes(row)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def images_in_run_and_chat():
    mmproj = os.path.join(WORK, "cli-run-mmproj.gguf")
    tandem("mkmodel", "--config", "tiny-e2b", "--mmproj", "--type", "f16", "-o", mmproj)
    images = []
    for i, (w, h) in enumerate(((96, 96), (144, 96))):
        images.append(os.path.join(WORK, f"cli-image-{i}.png"))
        with open(images[-1], "wb") as f:
            f.write(png_bytes(w, h, 7 + i))
    text = run_json("-n", "4", "--temp", "0")
    args = ("-mm", mmproj, "--image", images[0], "--image", images[1], "-n", "24", "--temp", "0")
    plain = run_json(*args)
    assert plain["timings"]["prompt_n"] > text["timings"]["prompt_n"] + 8, plain["timings"]
    assert plain["timings"]["image_encode_ms"] > 0, plain["timings"]
    spec = run_json(*args, "-md", ASSISTANT, "--draft-max", "4", "--no-adaptive")
    assert spec["tokens"] == plain["tokens"], "speculation after images changed greedy output"
    assert spec["speculative"]["drafted"] > 0, spec["speculative"]
    other = run_json("-mm", mmproj, "--image", images[1], "--image", images[0], "-n", "24",
                     "--temp", "0")
    assert other["tokens"] != plain["tokens"], "the images' order made no difference"
    r = tandem("run", "-m", TARGET, "-p", PROMPT, *args, "--image-max-count", "1", check=False)
    assert r.returncode != 0 and "at most 1" in r.stderr and "--image-max-count" in r.stderr, \
        r.stderr
    # --chat: the --image files go with the first message, /image attaches one to the next.
    chat = "first\n/image " + images[1] + "\nsecond\n/image /nonexistent.png\nthird\n/exit\n"
    r = subprocess.run([TANDEM, "run", "-m", TARGET, "-mm", mmproj, "--image", images[0], "--chat",
                        "-n", "6", "--temp", "0"], input=chat, capture_output=True, text=True,
                       errors="replace", timeout=120)
    assert r.returncode == 0, r.stderr
    assert "(image attached:" in r.stderr, r.stderr
    assert "/nonexistent.png: cannot open image" in r.stderr, r.stderr
    # Three turns; later turns reuse the earlier ones' rows, and only turns with a new image
    # encode one.
    cached = [int(n) for n in re.findall(r"\((\d+) cached\)", r.stderr)]
    assert len(cached) == 3 and cached[0] == 0 and 0 < cached[1] < cached[2], r.stderr
    assert r.stderr.count("images encoded") == 2, r.stderr
    r = subprocess.run([TANDEM, "run", "-m", TARGET, "--chat", "-n", "4"], input="/image x.png\n",
                       capture_output=True, text=True, errors="replace", timeout=120)
    assert "no vision projector" in r.stderr, r.stderr


def wav_bytes(seconds, hz, rate=16000):
    import math
    import struct
    n = int(seconds * rate)
    data = b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * hz * i / rate)))
                    for i in range(n))
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " +
            struct.pack("<IHHIIHH", 16, 1, 1, rate, 2 * rate, 2, 16) + b"data" +
            struct.pack("<I", len(data)) + data)


def audio_in_run_chat_and_transcribe():
    mmproj = os.path.join(WORK, "cli-run-mmproj-audio.gguf")
    tandem("mkmodel", "--config", "tiny-e2b", "--mmproj", "--type", "f16", "-o", mmproj)
    clips = []
    for i, hz in enumerate((440, 1200)):
        clips.append(os.path.join(WORK, f"cli-audio-{i}.wav"))
        with open(clips[-1], "wb") as f:
            f.write(wav_bytes(1.0, hz))
    text = run_json("-n", "4", "--temp", "0")
    args = ("-mm", mmproj, "--audio", clips[0], "-n", "24", "--temp", "0")
    plain = run_json(*args)
    # One second: 25 soft tokens and the two markers.
    assert plain["timings"]["prompt_n"] == text["timings"]["prompt_n"] + 27, plain["timings"]
    assert plain["timings"]["audio_encode_ms"] > 0, plain["timings"]
    spec = run_json(*args, "-md", ASSISTANT, "--draft-max", "4", "--no-adaptive")
    assert spec["tokens"] == plain["tokens"], "speculation after audio changed greedy output"
    assert spec["speculative"]["drafted"] > 0, spec["speculative"]
    other = run_json("-mm", mmproj, "--audio", clips[1], "-n", "24", "--temp", "0")
    assert other["tokens"] != plain["tokens"], "another recording made no difference"
    # transcribe: the same text with and without the assistant; the JSON names the task.
    base = ("transcribe", clips[0], "-m", TARGET, "-mm", mmproj, "-n", "16", "--json")
    t = json.loads(tandem(*base).stdout)
    t_spec = json.loads(tandem(*base, "-md", ASSISTANT, "--draft-max", "4", "--no-adaptive").stdout)
    assert t["tokens"] == t_spec["tokens"] and t["task"] == "transcribe", (t, t_spec)
    assert abs(t["duration"] - 1.0) < 1e-6, t
    tr = json.loads(tandem(*base, "--translate").stdout)
    assert tr["task"] == "translate" and tr["timings"]["prompt_n"] != t["timings"]["prompt_n"], tr
    # --chat: /audio attaches a recording to the next message.
    r = subprocess.run([TANDEM, "run", "-m", TARGET, "-mm", mmproj, "--chat", "-n", "4",
                        "--temp", "0"], input=f"/audio {clips[1]}\nwhat is it?\n/exit\n",
                       capture_output=True, text=True, errors="replace", timeout=120)
    assert r.returncode == 0 and "(audio attached: 1.0 s, 25 soft tokens)" in r.stderr, r.stderr
    assert "audio encoded" in r.stderr, r.stderr
    for bad, want in (((TARGET,), "no audio encoder is loaded"),
                      ((TARGET, "-mm", mmproj, "--audio", mmproj), "not a WAV, FLAC, Ogg or MP3")):
        r = tandem("run", "-m", bad[0], *bad[1:], "-p", "x", *(() if "--audio" in bad
                                                              else ("--audio", clips[0])),
                   check=False)
        assert r.returncode != 0 and want in r.stderr, r.stderr
    r = tandem("transcribe", "/nonexistent.wav", "-m", TARGET, "-mm", mmproj, check=False)
    assert r.returncode != 0 and "/nonexistent.wav: cannot open audio file" in r.stderr, r.stderr


tandem("mkmodel", "--config", "tiny-e2b", "--type", "q8_0", "-o", TARGET)
tandem("mkmodel", "--config", "tiny-e2b", "--assistant", "--type", "q8_0", "-o", ASSISTANT)
for test in (greedy_is_reproducible_and_identical_with_speculation, stop_strings_are_honoured,
             sampling_is_reproducible_from_the_seed, flags_without_effect_are_warned,
             errors_are_clear, bench_reports_every_section, mmproj_is_written_and_inspected,
             quantized_mix_is_inspected,
             images_in_run_and_chat, audio_in_run_chat_and_transcribe):
    case(test)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
