// Token logprobs and the thinking budget through the official clients, against `tandem serve` on
// the bundled trained pair (models/): OpenAI chat `logprobs` + `top_logprobs` (whole and
// streamed), legacy completions `logprobs: N`, llama-server `n_probs`, and Anthropic
// `thinking.budget_tokens`. The logprobs are the raw model distribution (log-softmax of the
// target's logits), bitwise the same with and without speculation.
//
// The trained pair never opens a thought channel by itself, so the budget tests force it open
// with a logit bias on `<|channel>`: every token is then that one, and only the budget closes the
// channel.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { MODEL_ID, skipReason, startServer } from './server_harness.mjs';

const KEY = 'test-key-logprobs';
const messages = [{ role: 'user', content: 'Write a short Python function.' }];

// Shape, logprob <= 0, sorted alternatives holding the greedy choice, total mass <= 1.
function checkEntry(e, nTop) {
  assert.equal(typeof e.token, 'string');
  assert.ok(Array.isArray(e.bytes) && e.bytes.every((b) => b >= 0 && b <= 255));
  const decoded = Buffer.from(e.bytes).toString('utf8');
  if (!decoded.includes('\uFFFD')) assert.equal(e.token, decoded);  // whole characters: the text
  assert.ok(e.logprob <= 0, `logprob ${e.logprob}`);
  assert.equal(e.top_logprobs.length, nTop);
  let mass = 0;
  for (let r = 0; r < e.top_logprobs.length; ++r) {
    const t = e.top_logprobs[r];
    assert.ok(t.logprob <= 0);
    if (r > 0) assert.ok(t.logprob <= e.top_logprobs[r - 1].logprob, 'sorted');
    mass += Math.exp(t.logprob);
  }
  assert.ok(mass <= 1 + 1e-6, `mass ${mass}`);
  if (nTop > 0) {  // greedy: the chosen token is the argmax
    assert.deepEqual(e.top_logprobs[0].bytes, e.bytes);
    assert.equal(e.top_logprobs[0].logprob, e.logprob);
  }
}

describe('logprobs and thinking budget', { skip: skipReason() ?? false, timeout: 150000 }, () => {
  let server;
  let openai;
  let anthropic;

  before(async () => {
    server = await startServer(['--api-key', KEY, '--parallel', '2']);
    openai = new OpenAI({ apiKey: KEY, baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });
    anthropic = new Anthropic({ apiKey: KEY, baseURL: server.base, maxRetries: 0, timeout: 60000 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  test('chat logprobs: shape, greedy argmax, identical with and without speculation', async () => {
    const body = { model: MODEL_ID(), messages, max_tokens: 24, temperature: 0, logprobs: true,
      top_logprobs: 5 };
    const spec = await openai.chat.completions.create(body);
    const plain = await openai.chat.completions.create({ ...body, speculative: { enabled: false } });
    const content = spec.choices[0].logprobs.content;
    assert.equal(content.length, spec.usage.completion_tokens - (spec.choices[0].finish_reason === 'stop' ? 1 : 0));
    for (const e of content) checkEntry(e, 5);
    assert.ok(spec.timings.speculative.drafted > 0, 'speculation ran');
    // Bitwise the same numbers (JSON writes floats exactly), token for token.
    assert.deepEqual(plain.choices[0].logprobs, spec.choices[0].logprobs);
    // The bytes spell the text (the reply has no thought or tool markers).
    const text = Buffer.concat(content.map((e) => Buffer.from(e.bytes))).toString('utf8');
    assert.equal(text, spec.choices[0].message.content);
    const off = await openai.chat.completions.create({ ...body, logprobs: false, top_logprobs: undefined });
    assert.equal(off.choices[0].logprobs, null);
  });

  test('streamed chunks carry the logprobs of their tokens', async () => {
    const body = { model: MODEL_ID(), messages, max_tokens: 24, temperature: 0, logprobs: true,
      top_logprobs: 2 };
    const whole = await openai.chat.completions.create(body);
    const streamed = [];
    for await (const chunk of await openai.chat.completions.create({ ...body, stream: true })) {
      const lp = chunk.choices[0]?.logprobs;
      if (lp) streamed.push(...lp.content);
    }
    assert.deepEqual(streamed, whole.choices[0].logprobs.content);
  });

  test('top_logprobs without logprobs and above 20 are 400s', async () => {
    for (const extra of [{ top_logprobs: 3 }, { logprobs: true, top_logprobs: 21 }]) {
      await assert.rejects(
        openai.chat.completions.create({ model: MODEL_ID(), messages, max_tokens: 2, ...extra }),
        (e) => e.status === 400 && /top_logprobs/.test(e.message));
    }
  });

  test('legacy completions logprobs: N, whole and streamed', async () => {
    const body = { model: MODEL_ID(), prompt: 'def add(a, b):', max_tokens: 12, temperature: 0,
      logprobs: 3 };
    const whole = await openai.completions.create(body);
    const lp = whole.choices[0].logprobs;
    assert.equal(lp.tokens.length, lp.token_logprobs.length);
    assert.equal(lp.tokens.length, lp.top_logprobs.length);
    assert.equal(lp.tokens.join(''), whole.choices[0].text);
    let offset = 0;
    for (let i = 0; i < lp.tokens.length; ++i) {
      assert.ok(lp.token_logprobs[i] <= 0);
      assert.equal(lp.text_offset[i], offset);
      offset += Buffer.byteLength(lp.tokens[i]);
      const alternatives = Object.values(lp.top_logprobs[i]);
      assert.ok(alternatives.length >= 1 && alternatives.length <= 3);
      assert.equal(Math.max(...alternatives), lp.token_logprobs[i]);  // greedy
    }
    const tokens = [];
    for await (const chunk of await openai.completions.create({ ...body, stream: true })) {
      if (chunk.choices[0]?.logprobs) tokens.push(...chunk.choices[0].logprobs.tokens);
    }
    assert.deepEqual(tokens, lp.tokens);
  });

  test('llama-server n_probs gives completion_probabilities', async () => {
    const r = await fetch(`${server.base}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ prompt: 'import os', n_predict: 6, temperature: 0, n_probs: 4 }),
    });
    assert.equal(r.status, 200);
    const j = await r.json();
    assert.equal(j.choices[0].logprobs, null);
    const probs = j.completion_probabilities;
    assert.ok(probs.length >= 1);
    for (const p of probs) {
      assert.ok(Number.isInteger(p.id));
      checkEntry(p, 4);
      for (const t of p.top_logprobs) assert.ok(Number.isInteger(t.id));
      assert.equal(p.top_logprobs[0].id, p.id);
    }
  });

  // Thought tokens: the bias makes each of them `<|channel>`, so they are counted as such.
  const thoughtTokens = (m) => m.content.filter((b) => b.type === 'thinking')
    .map((b) => b.thinking.split('<|channel>').length - 1).reduce((a, b) => a + b, 0);

  test('Anthropic thinking.budget_tokens closes the thought channel', async () => {
    const channel = await (await fetch(`${server.base}/tokenize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ content: '<|channel>', parse_special: true }),
    })).json();
    assert.equal(channel.tokens.length, 1);
    const body = { model: MODEL_ID(), max_tokens: 40, temperature: 0,
      messages: [{ role: 'user', content: 'Why is the sky blue?' }],
      logit_bias: { [channel.tokens[0]]: 30 } };
    const free = await anthropic.messages.create({ ...body, thinking: { type: 'enabled' } });
    assert.ok(thoughtTokens(free) > 20, 'without a budget the forced channel stays open');
    for (const budget of [0, 3, 10]) {
      const m = await anthropic.messages.create({ ...body,
        thinking: { type: 'enabled', budget_tokens: budget } });
      assert.equal(thoughtTokens(m), budget, `budget ${budget}`);
      // (The bias reopens the channel in the answer: the parser warns about those, not the budget.)
      assert.ok(!(m.warnings ?? []).some((w) => /budget/.test(w)), JSON.stringify(m.warnings));
      const plain = await anthropic.messages.create({ ...body, speculative: { enabled: false },
        thinking: { type: 'enabled', budget_tokens: budget } });
      assert.deepEqual(plain.content, m.content);
    }
  });

  test('reasoning_effort takes none, minimal, low, medium, high only', async () => {
    const r = await openai.chat.completions.create({ model: MODEL_ID(), messages, max_tokens: 4,
      reasoning_effort: 'low' });
    assert.ok(r.choices[0].message);
    await assert.rejects(
      openai.chat.completions.create({ model: MODEL_ID(), messages, max_tokens: 2,
        reasoning_effort: 'extreme' }),
      (e) => e.status === 400 && /reasoning_effort/.test(e.message));
  });
});
