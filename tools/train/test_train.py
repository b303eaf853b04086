#!/usr/bin/python3
"""Tests of the training tooling (ctest `train_pipeline`, label `train`).

  test_train.py --tandem BUILD/tandem --dump BUILD/tandem-dump-logits [--workdir DIR] [--keep]

Runs the smoke pipeline once, each step as its command-line script (corpus --smoke, a 1024-token
vocabulary, 20 target steps, 20 assistant steps, export as f32 safetensors, tandem convert and
quantize), then checks on the exported weights:
* the PyTorch target and assistant (float64) agree with the NumPy reference (tools/reference)
  read from the converted f32 GGUFs: logits, hidden, K/V, draft logits, next hidden, normed
  state within 1e-9;
* tandem (tandem-dump-logits, f32 weights and KV) agrees with the PyTorch float32 target within
  1e-3 on logits and hidden states, and the Q8_0 file within 0.25;
* `tandem run` greedy MTP (draft-max 3, no adaptation) gives the same tokens, rounds,
  drafted/accepted counts and acceptance per draft position as the PyTorch loop (prompts with a
  near-tie decision are left out);
* `tandem tokenize` gives the Python encoder's ids on mixed samples; the merge rule holds; the
  chat template renders the Gemma 4 format (skipped without python3-jinja2);
* training twice gives identical weights; safetensors round trip (F32, BF16 rounding),
  balanced k-means, deterministic corpus and tokenizer training.
Prints "N passed, M failed, K skipped". Exit code 0 = all passed, 1 = a failure, 77 = skipped
(PyTorch or NumPy missing, or the tandem binaries not found).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"SKIP: {e} (install python3-torch and python3-numpy)")
    sys.exit(77)

import centroids  # noqa: E402
import infer  # noqa: E402
import safetensors_io  # noqa: E402
import tokenizer as tokenizer_lib  # noqa: E402
import train_common as tc  # noqa: E402

ARGS = None
PIPE = {}  # paths of the smoke pipeline's outputs, filled by setUpModule
REF_TOL = 1e-9       # float64 PyTorch vs float64 NumPy reference
TANDEM_TOL = 1e-3    # float32 PyTorch vs tandem with f32 weights and KV
Q8_TOL = 0.25        # Q8_0 weights: max |Δlogit| against the f32 PyTorch model
NEAR_TIE = 1e-3      # decisions closer than this are not compared across engines


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exited {r.returncode}:\n{r.stderr[-2000:]}")
    return r.stdout


def script(name, *args):
    return run([sys.executable, os.path.join(HERE, name), *args])


def setUpModule():
    work = PIPE["work"]
    start = time.time()
    script("corpus.py", "--smoke", "--out", os.path.join(work, "corpus"))
    script("tokenizer.py", "train", "--corpus", os.path.join(work, "corpus"), "--out",
           os.path.join(work, "tokenizer"), "--vocab-size", "1024", "--sample-mb", "0.4")
    script("train_target.py", "--work", work, "--smoke", "--threads", "1")
    script("train_assistant.py", "--work", work, "--smoke", "--threads", "1")
    out = os.path.join(work, "models")
    script("export.py", "--work", work, "--out-dir", out, "--tandem", ARGS.tandem, "--dtype",
           "f32", "--quant", "Q8_0", "--name", "smoke")
    PIPE.update(target_gguf=os.path.join(out, "smoke-f32.gguf"),
                assistant_gguf=os.path.join(out, "smoke-assistant-f32.gguf"),
                target_q8=os.path.join(out, "smoke-Q8_0.gguf"),
                assistant_q8=os.path.join(out, "smoke-assistant-Q8_0.gguf"))
    print(f"smoke pipeline: {time.time() - start:.1f} s", flush=True)


def load_pair(dtype):
    target = tc.load_target(os.path.join(PIPE["work"], "target.pt")).to(dtype)
    assistant = tc.load_assistant(os.path.join(PIPE["work"], "assistant.pt"), target.config)
    return target.eval(), assistant.to(dtype).eval()


def sample_prompts(n, chars):
    """The first `chars` characters of the first n held-out documents."""
    docs = [d for d in tc.corpus_lib.read_split(os.path.join(PIPE["work"], "corpus"), "heldout")
            if len(d) >= chars]
    return [d[:chars] for d in docs[:n]]


def tokenizer():
    return tokenizer_lib.Tokenizer.load(os.path.join(PIPE["work"], "tokenizer"))


class PipelineOutputs(unittest.TestCase):
    def test_files_and_logs(self):
        for key in ("target_gguf", "assistant_gguf", "target_q8", "assistant_q8"):
            self.assertTrue(os.path.getsize(PIPE[key]) > 0, key)
        for log, n in (("target_log.csv", 20), ("assistant_log.csv", 20)):
            with open(os.path.join(PIPE["work"], log)) as f:
                self.assertEqual(len(f.read().strip().split("\n")), n + 1, log)
        with open(os.path.join(PIPE["work"], "target_summary.json")) as f:
            summary = json.load(f)
        self.assertTrue(np.isfinite(summary["heldout_loss"]))
        with open(os.path.join(PIPE["work"], "hf", "assistant", "config.json")) as f:
            self.assertEqual(json.load(f)["architectures"], ["Gemma4AssistantForCausalLM"])

    def test_training_is_repeatable(self):
        again = os.path.join(PIPE["work"], "again")
        os.makedirs(again, exist_ok=True)
        for sub in ("corpus", "tokenizer"):
            shutil.copytree(os.path.join(PIPE["work"], sub), os.path.join(again, sub),
                            dirs_exist_ok=True)
        script("train_target.py", "--work", again, "--smoke", "--threads", "1")
        one = torch.load(os.path.join(PIPE["work"], "target.pt"))["state_dict"]
        two = torch.load(os.path.join(again, "target.pt"))["state_dict"]
        self.assertEqual(sorted(one), sorted(two))
        for name in one:
            self.assertTrue(torch.equal(one[name], two[name]), name)

    def test_bf16_export_converts(self):
        work = PIPE["work"]
        script("export.py", "--work", work, "--no-convert", "--dtype", "bf16")
        tensors = safetensors_io.read(os.path.join(work, "hf", "target", "model.safetensors"))
        self.assertIn("model.layers.0.layer_scalar", tensors)
        out = os.path.join(work, "bf16.gguf")
        run([ARGS.tandem, "convert", os.path.join(work, "hf", "target"), "-o", out, "--type",
             "f32", "--no-progress"])
        self.assertGreater(os.path.getsize(out), 0)


class ReferenceParity(unittest.TestCase):
    """PyTorch (float64) vs the NumPy reference on the converted f32 GGUFs."""

    @classmethod
    def setUpClass(cls):
        import assistant as ref_assistant
        import gemma4 as ref_gemma4
        cls.ref_assistant = ref_assistant
        cls.ref_target = ref_gemma4.Model.load(PIPE["target_gguf"])
        cls.ref_drafter = ref_assistant.Assistant.load(PIPE["assistant_gguf"]).bind(
            cls.ref_target)
        cls.target, cls.assistant = load_pair(torch.float64)
        cls.tokens = tokenizer().encode(sample_prompts(1, 200)[0])[:48]

    def test_target_logits_hidden_kv(self):
        st = self.ref_target.run(self.tokens)
        with torch.no_grad():
            logits, hidden, kv = self.target(torch.tensor([self.tokens]))
        self.assertGreater(len(self.tokens), self.target.config.sliding_window)
        self.assertLess(np.abs(st.logits - logits[0].numpy()).max(), REF_TOL)
        self.assertLess(np.abs(st.hidden - hidden[0].numpy()).max(), REF_TOL)
        self.assertEqual(sorted(st.kv), sorted(kv))
        for layer, (k, v) in st.kv.items():
            self.assertLess(np.abs(k - kv[layer][0][0].numpy()).max(), REF_TOL, layer)
            self.assertLess(np.abs(v - kv[layer][1][0].numpy()).max(), REF_TOL, layer)

    def test_assistant_draft_steps(self):
        prompt = self.tokens[:40]
        t0, h_ref, ref_steps = self.ref_assistant.draft_after_prompt(
            self.ref_target, self.ref_drafter, prompt, 3)
        with torch.no_grad():
            logits, hidden, kv = self.target(torch.tensor([prompt]))
        self.assertEqual(t0, int(logits[0, -1].argmax()))
        steps = infer.draft(self.target, self.assistant, kv, len(prompt), t0, hidden[0, -1],
                            len(prompt), 3)
        for r, s in zip(ref_steps, steps):
            mine = s.logits.numpy()
            self.assertTrue(np.array_equal(np.isfinite(r.logits), np.isfinite(mine)))
            finite = np.isfinite(mine)
            self.assertLess(finite.sum(), mine.size)  # the centroid head kept a subset
            self.assertLess(np.abs(r.logits[finite] - mine[finite]).max(), REF_TOL)
            self.assertLess(np.abs(r.h_next - s.h_next.numpy()).max(), REF_TOL)
            self.assertLess(np.abs(r.y - s.y.numpy()).max(), REF_TOL)
            self.assertEqual(r.token, s.token)


class TandemParity(unittest.TestCase):
    """PyTorch (float32) vs tandem's C++ forward pass and MTP loop."""

    @classmethod
    def setUpClass(cls):
        cls.target, cls.assistant = load_pair(torch.float32)
        cls.tk = tokenizer()
        cls.tokens = cls.tk.encode(sample_prompts(1, 200)[0])[:48]

    def dump(self, gguf):
        out = os.path.join(PIPE["work"], "dump.bin")
        run([ARGS.dump, "-m", gguf, "--tokens", ",".join(map(str, self.tokens)), "--out", out])
        t, v, d = len(self.tokens), len(self.tk), self.target.config.hidden_size
        data = np.fromfile(out, dtype="<f4")
        self.assertEqual(data.size, t * (v + d))
        return data[:t * v].reshape(t, v), data[t * v:].reshape(t, d)

    def test_f32_logits_hidden(self):
        with torch.no_grad():
            logits, hidden, _ = self.target(torch.tensor([self.tokens]))
        cl, ch = self.dump(PIPE["target_gguf"])
        self.assertLess(np.abs(cl - logits[0].numpy()).max(), TANDEM_TOL)
        self.assertLess(np.abs(ch - hidden[0].numpy()).max(), TANDEM_TOL)

    def test_q8_0_logits(self):
        with torch.no_grad():
            logits, _, _ = self.target(torch.tensor([self.tokens]))
        cl, _ = self.dump(PIPE["target_q8"])
        self.assertLess(np.abs(cl - logits[0].numpy()).max(), Q8_TOL)

    def test_mtp_greedy_matches(self):
        eog = {self.tk.ids[t] for t in infer.EOG_TEXTS}
        compared = 0
        for text in sample_prompts(6, 80):
            prompt = self.tk.encode(text)
            mine = infer.mtp_greedy(self.target, self.assistant, prompt, 24, 3, eog)
            if mine["min_margin"] < NEAR_TIE:
                continue
            out = run([ARGS.tandem, "run", "-m", PIPE["target_gguf"], "--model-draft",
                       PIPE["assistant_gguf"], "--spec-type", "mtp", "--draft-max", "3",
                       "--no-adaptive", "--temp", "0", "-n", "24", "-t", "1", "--kv-type", "f32",
                       "--seed", "1", "--json", "-p", text])
            got = json.loads(out)
            self.assertEqual(got["timings"]["prompt_n"], len(prompt), text)
            self.assertEqual(got["tokens"], mine["tokens"], text)
            self.assertEqual(got["speculative"]["drafted"], mine["drafted"], text)
            self.assertEqual(got["speculative"]["accepted"], mine["accepted"], text)
            self.assertEqual(got["speculative"]["rounds"], len(mine["rounds"]), text)
            np.testing.assert_allclose(got["speculative"]["acceptance_by_position"],
                                       mine["acceptance_by_position"], atol=1e-9, err_msg=text)
            compared += 1
        self.assertGreater(compared, 0, "every prompt had a near-tie decision")


class TokenizerTests(unittest.TestCase):
    SAMPLES = [
        "def foo(self, x):\n    return x  # comment\n",
        "\u00dcn\u00efc\u00f6d\u00e9 \u2713 \u4e2d\u6587 \U0001F600 tabs\tand\r\nCRLF",
        "\n\n\n\n\n\n\n\n\n\n\nend\n",
        "   leading and trailing   ",
        "<|turn>user\nHello there<turn|>\n<|turn>model\n",
        'a<bos>b<eos><|"|>x<|think|><|channel>thought\n<channel|>',
        "<0x41> literal <unused3> [PAD] <|tool_call>call:f{}<tool_call|>",
        "x" * 300 + " " + "ab" * 40,
    ]

    def test_tandem_tokenizes_like_python(self):
        tk = tokenizer()
        for text in self.SAMPLES:
            out = run([ARGS.tandem, "tokenize", "-m", PIPE["target_gguf"], "--ids", text])
            self.assertEqual(json.loads(out), tk.encode(text), repr(text))

    def test_round_trip_and_layout(self):
        tk = tokenizer()
        for text in self.SAMPLES:
            self.assertEqual(tk.decode(tk.encode(text, add_bos=False)), text)
        for i, t in tokenizer_lib.SPECIALS:
            self.assertEqual(tk.tokens[i], t)
        self.assertEqual(tk.tokens[tokenizer_lib.FIRST_NEWLINE_ID], "\n")
        self.assertEqual(len(tk), 1024)

    def test_chat_template_renders(self):
        try:
            import jinja2
        except ImportError:
            self.skipTest("python3-jinja2 is not installed")
        with open(os.path.join(PIPE["work"], "tokenizer", "tokenizer_config.json")) as f:
            template = jinja2.Environment().from_string(json.load(f)["chat_template"])
        messages = [{"role": "system", "content": " Be brief. "},
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "<|channel>thought\nx<channel|>Hello!"},
                    {"role": "user", "content": "Bye"}]
        self.assertEqual(
            template.render(messages=messages, bos_token="<bos>", add_generation_prompt=True),
            "<bos><|turn>system\nBe brief.<turn|>\n<|turn>user\nHi<turn|>\n"
            "<|turn>model\nHello!<turn|>\n<|turn>user\nBye<turn|>\n<|turn>model\n")
        self.assertEqual(
            template.render(messages=messages[1:2], bos_token="<bos>", enable_thinking=True,
                            add_generation_prompt=True),
            "<bos><|turn>system\n<|think|><turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n")

    def test_merge_rule(self):
        self.assertTrue(tokenizer_lib.allowed_token("\u2581def"))
        self.assertTrue(tokenizer_lib.allowed_token("\u2581\u2581\u2581\u2581"))
        self.assertFalse(tokenizer_lib.allowed_token("a\u2581b"))
        self.assertFalse(tokenizer_lib.allowed_token("\u2581\u2581x"))
        for a, b in tokenizer().ranks:
            self.assertTrue(tokenizer_lib.allowed_token(a + b), a + b)

    def test_training_is_deterministic(self):
        docs = ["the cat sat on the mat\n" * 20, "def f(x):\n    return x + 1\n" * 10]
        one = tokenizer_lib.build_vocab(docs, 700, min_char_count=1)
        two = tokenizer_lib.build_vocab(docs, 700, min_char_count=1)
        self.assertEqual(one, two)
        self.assertEqual(len(one[0]), 700)
        self.assertIn(("\u2581", "\u2581"), one[1])


class UnitTests(unittest.TestCase):
    def test_safetensors_round_trip(self):
        rng = np.random.default_rng(0)
        tensors = {"a": rng.standard_normal((3, 5)).astype(np.float32),
                   "b": np.array([1.5], np.float32), "i": np.arange(7, dtype=np.int64)}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.safetensors")
            safetensors_io.write(path, tensors, "F32")
            back = safetensors_io.read(path)
            for k, v in tensors.items():
                self.assertTrue(np.array_equal(back[k], v), k)
            with open(path, "rb") as f:
                self.assertEqual((8 + int.from_bytes(f.read(8), "little")) % 8, 0)
            safetensors_io.write(path, tensors, "BF16")
            back = safetensors_io.read(path)
        # 1 + 2^-8 is a tie: round to even gives 1.0; 1 + 3·2^-8 rounds up to 1 + 2^-6.
        bits = safetensors_io.to_bf16_bits(np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8], np.float32))
        self.assertEqual(list(safetensors_io.from_bf16_bits(bits)), [1.0, 1 + 2 ** -6])
        self.assertLess(np.abs(back["a"] - tensors["a"]).max(), 2 ** -7 * 4)
        self.assertTrue(np.array_equal(back["i"], tensors["i"]))

    def test_balanced_kmeans(self):
        rows = np.random.default_rng(1).standard_normal((64, 8))
        cent, ordering = centroids.balanced_kmeans(rows, 8, seed=3)
        self.assertEqual(sorted(ordering.tolist()), list(range(64)))
        self.assertEqual(cent.shape, (8, 8))
        again = centroids.balanced_kmeans(rows, 8, seed=3)[1]
        self.assertTrue(np.array_equal(ordering, again))
        with self.assertRaises(ValueError):
            centroids.balanced_kmeans(rows, 7)

    def test_corpus_is_deterministic(self):
        with open(os.path.join(PIPE["work"], "corpus", "manifest.json")) as f:
            first = json.load(f)
        again = os.path.join(PIPE["work"], "corpus2")
        script("corpus.py", "--smoke", "--out", again)
        with open(os.path.join(again, "manifest.json")) as f:
            self.assertEqual(json.load(f)["files"], first["files"])
        self.assertGreater(first["heldout_bytes"], 0)


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tandem", required=True, help="the tandem binary")
    p.add_argument("--dump", required=True, help="the tandem-dump-logits binary")
    p.add_argument("--workdir", default=None, help="where to run (default: a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    ARGS, rest = p.parse_known_args()
    for path in (ARGS.tandem, ARGS.dump):
        if not os.path.exists(path):
            print(f"SKIP: {path} not found (build the tandem and tandem-dump-logits targets)")
            return 77
    work = ARGS.workdir or tempfile.mkdtemp(prefix="tandem-train-")
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    PIPE["work"] = work
    torch.set_num_threads(1)
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    print(f"{result.testsRun - failed - skipped} passed, {failed} failed, {skipped} skipped")
    if not ARGS.keep and not failed:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
