// llama.cpp as the oracle after an image: `tandem serve` set to llama.cpp's image rules
// (--image-resize llamacpp --image-attention bidirectional --vision-gelu file) and llama-server
// (the peer build in ../shared/peer, or TANDEM_PEER_BIN; skipped, saying so, when it is absent)
// serve the same tiny text GGUF and mmproj. The same greedy /completion with multimodal_data and
// the same chat request with an image_url part must give the same tokens and top log-probs.
//
// The mmproj files: TANDEM_MMPROJ_NO_CLAMPS (the tiny tower without clamp bounds) is compared;
// TANDEM_MMPROJ (with them, like the E2B/E4B towers) is a todo: llama.cpp 3f545be clamps the
// input that q/k/v (and gate/up) share in place, so k and v also get q's input clamp and up
// gets gate's; tandem and the NumPy reference clamp each linear's own input, as transformers
// does (docs/vision.md § Clamped linears).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { png } from './test_png.mjs';
import { peerBin, startPeerServer, usablePeer } from './peer.mjs';
import { GEMMA4_TEMPLATE, chatSteps, compareSteps as compareWithin, nonUtf8Tokens, post, steps } from './peer_compare.mjs';
import { env, startServer } from './server_harness.mjs';

const files = {
  model: process.env.TANDEM_MODEL_F32,
  mmproj: process.env.TANDEM_MMPROJ_NO_CLAMPS,
  clamped: process.env.TANDEM_MMPROJ,
};

function skip() {
  if (!env.bin || !env.assistant || !files.model || !files.mmproj || !files.clamped) {
    return 'TANDEM_BIN, TANDEM_ASSISTANT, TANDEM_MODEL_F32, TANDEM_MMPROJ and '
      + 'TANDEM_MMPROJ_NO_CLAMPS are not set (run through ctest)';
  }
  return false;
}

// Bound on |Δ logprob| between the engines for a token both list. On these files (f32 text
// weights, f16 tower) the largest seen is 0.0085 over 16 steps x 5 candidates; text-only
// prompts differ by at most 0.003, which is llama.cpp's fp16 GELU table in the text FFN
// (tools/reference/README.md § Test results), and the rest is llama.cpp's f16 rounding in the
// tower. A wrong image rule or scale moves them by far more: tandem with --image-attention
// causal here, or with soft tokens scaled by sqrt(D), is 0.27-0.54 away.
const TOL = 0.02;

// 288 x 336: sides multiples of 48 and 6 x 7 = 42 soft tokens, inside llama.cpp's 40..280, so
// neither engine resizes it.
const image = png(288, 336, 1);

const compareSteps = (ours, theirs, where) => compareWithin(ours, theirs, where, TOL);

describe('llama.cpp as the oracle after an image', { skip: skip(), timeout: 170000 }, () => {
  let why;
  let banned;
  const servers = {};

  before(async () => {
    const found = usablePeer();
    if (!found.run) {
      why = `llama-server (${peerBin}) cannot be used, ${found.why}: the comparison does not run`;
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'tandem-oracle-'));
    const template = join(dir, 'gemma4.jinja');
    writeFileSync(template, GEMMA4_TEMPLATE);
    const rules = ['--image-resize', 'llamacpp', '--image-attention', 'bidirectional', '--vision-gelu', 'file'];
    const common = ['-t', '1', '-c', '1024'];
    for (const [name, mm] of [['plain', files.mmproj], ['clamped', files.clamped]]) {
      servers[name] = {
        tandem: await startServer(['-mm', mm, ...rules, '--no-warmup'], { model: files.model }),
        llama: await startPeerServer(found.run, ['-m', files.model, '-mm', mm, ...common, '--chat-template-file', template],
          { LLAMA_MEDIA_MARKER: '<__media__>' }),
      };
    }
    banned = await nonUtf8Tokens(servers.plain.tandem.base);
  });

  after(async () => {
    for (const s of Object.values(servers)) {
      s.llama?.stop();
      const status = await s.tandem?.stop();
      assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
    }
  });

  const completion = () => ({
    prompt: { prompt_string: 'Look: <__media__> now tell', multimodal_data: [image.toString('base64')] },
    n_predict: 16, temperature: 0, n_probs: 5, logit_bias: banned.map((id) => [id, -100]),
  });

  async function compareCompletion(pair, where) {
    const [o, p] = [await post(pair.tandem.base, '/completion', completion()),
      await post(pair.llama.base, '/completion', completion())];
    assert.equal(o.tokens_evaluated, p.tokens_evaluated, 'the same prompt rows: 1 + 6 + 1 + 42 + 1 + 8');
    return compareSteps(steps(o.completion_probabilities), steps(p.completion_probabilities), where);
  }

  test('/completion with multimodal_data: greedy tokens and top-5 log-probs', async (t) => {
    if (why) return t.skip(why);
    const { agreed, worst } = await compareCompletion(servers.plain, '/completion');
    t.diagnostic(`${agreed} of 16 greedy steps compared before any near-tie, max |Δlogprob| ${worst.toFixed(4)}`);
    assert.ok(agreed >= 8, `only ${agreed} steps before the first near-tie`);
  });

  test('chat with an image_url part: the same prompt, tokens and top-3 log-probs', async (t) => {
    if (why) return t.skip(why);
    const body = {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } }] }],
      max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 3,
      logit_bias: Object.fromEntries(banned.map((id) => [String(id), -100])),
    };
    const [o, p] = [await post(servers.plain.tandem.base, '/v1/chat/completions', body),
      await post(servers.plain.llama.base, '/v1/chat/completions', body)];
    assert.equal(o.usage.prompt_tokens, p.usage.prompt_tokens, 'the same rendered prompt');
    const { agreed, worst } = compareSteps(chatSteps(o), chatSteps(p), 'chat');
    t.diagnostic(`${agreed} of 12 chat tokens compared before any near-tie, max |Δlogprob| ${worst.toFixed(4)}`);
    assert.ok(agreed >= 4, `only ${agreed} chat tokens before the first near-tie`);
  });

  test('clamped vision linears (the E2B/E4B towers)', {
    todo: 'llama.cpp 3f545be clamps the shared input of k/v (up) with q\'s (gate\'s) input bounds too',
  }, async (t) => {
    if (why) return t.skip(why);
    const { agreed, worst } = await compareCompletion(servers.clamped, '/completion, clamped');
    t.diagnostic(`${agreed} steps agreed, max |Δlogprob| ${worst.toFixed(4)}`);
  });

  test('the comparison is not vacuous: another image moves the answer', async (t) => {
    if (why) return t.skip(why);
    const other = { ...completion(), prompt: { prompt_string: 'Look: <__media__> now tell', multimodal_data: [png(288, 336, 2).toString('base64')] } };
    const [a, b] = [await post(servers.plain.tandem.base, '/completion', completion()),
      await post(servers.plain.tandem.base, '/completion', other)];
    const [x, y] = [a, b].map((r) => new Map(r.completion_probabilities[0].top_logprobs.map((q) => [q.id, q.logprob])));
    const moved = [...x].some(([id, lp]) => !y.has(id) || Math.abs(lp - y.get(id)) > 10 * TOL);
    assert.ok(moved, `a different image left the first step's top-5 within ${10 * TOL}: ${JSON.stringify([...x])} vs ${JSON.stringify([...y])}`);
  });
});
