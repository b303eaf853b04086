// `tandem serve -md <small gemma4>`: draft-model speculation behind the official `openai` client,
// whole and streamed, four requests drafting in parallel slots, and the per-slot metrics. Greedy
// output must equal the same request with speculation off (lossless), whatever the slots do.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { MODEL_ID, env, metric, startServer } from './server_harness.mjs';

const user = (content) => [{ role: 'user', content }];

function skip() {
  if (!env.bin || !env.model || !process.env.TANDEM_DRAFT) {
    return 'TANDEM_BIN, TANDEM_MODEL and TANDEM_DRAFT are not set (run through ctest)';
  }
  return false;
}

async function streamed(client, body) {
  const stream = await client.chat.completions.create({ ...body, stream: true });
  let text = '';
  let finish = null;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (choice?.delta?.content) text += choice.delta.content;
    if (choice?.finish_reason) finish = choice.finish_reason;
  }
  return { text, finish };
}

describe('draft-model speculation', { skip: skip(), timeout: 150000 }, () => {
  let server;
  let client;

  before(async () => {
    server = await startServer(['--parallel', '4'], { draft: process.env.TANDEM_DRAFT });
    client = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  const body = (content, max_tokens = 24) => ({
    model: MODEL_ID(), messages: user(content), max_tokens, temperature: 0,
  });

  test('a whole completion drafts and equals plain decoding', async () => {
    const on = await client.chat.completions.create(body('Draft with the small model'));
    const off = await client.chat.completions.create({
      ...body('Draft with the small model'), speculative: { enabled: false },
    });
    assert.equal(on.timings.speculative.enabled, true);
    assert.equal(on.timings.speculative.type, 'draft');
    assert.ok(on.timings.speculative.drafted > 0, 'the draft model drafted');
    assert.equal(off.timings.speculative.enabled, false);
    assert.equal(on.choices[0].message.content, off.choices[0].message.content);
    assert.equal(on.usage.completion_tokens, off.usage.completion_tokens);
  });

  test('a stream carries the same text as the whole completion', async () => {
    const whole = await client.chat.completions.create(body('Stream it', 20));
    const s = await streamed(client, body('Stream it', 20));
    assert.equal(s.text, whole.choices[0].message.content);
    assert.equal(s.finish, whole.choices[0].finish_reason);
  });

  test('four parallel slots draft at once and each equals plain decoding', async () => {
    const prompts = [0, 1, 2, 3].map((i) => `parallel request number ${i} ${'x'.repeat(i)}`);
    const drafts = [1, 3, 5, 8];
    const on = await Promise.all(prompts.map((p, i) => client.chat.completions.create({
      ...body(p, 32), speculative: { draft_max: drafts[i] },
    })));
    const off = [];
    for (const p of prompts) {
      off.push(await client.chat.completions.create({ ...body(p, 32), speculative: { enabled: false } }));
    }
    for (let i = 0; i < 4; ++i) {
      assert.ok(on[i].timings.speculative.drafted > 0, `request ${i} drafted`);
      assert.equal(on[i].choices[0].message.content, off[i].choices[0].message.content, `request ${i}`);
    }
    // Per-slot counters exist for the four slots and add up to the totals. (Which slots ran the
    // requests depends on timing: a request finishing early frees its slot for the next.)
    let drafted = 0;
    let accepted = 0;
    for (let i = 0; i < 4; ++i) {
      const d = await metric(server.base, 'slot_spec_drafted_tokens_total', `slot="${i}"`);
      const a = await metric(server.base, 'slot_spec_accepted_tokens_total', `slot="${i}"`);
      assert.equal(typeof d, 'number', `slot ${i} has a drafted counter`);
      drafted += d;
      accepted += a;
    }
    assert.ok(drafted > 0);
    assert.equal(drafted, await metric(server.base, 'spec_drafted_tokens_total'));
    assert.equal(accepted, await metric(server.base, 'spec_accepted_tokens_total'));
  });
});

describe('the target as its own draft model', { skip: skip(), timeout: 60000 }, () => {
  test('accepts every draft token', async () => {
    const server = await startServer([], { draft: env.model });
    try {
      const client = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
      const r = await client.chat.completions.create({
        model: MODEL_ID(), messages: user('Echo'), max_tokens: 24, temperature: 0,
        speculative: { draft_max: 4 },
      });
      assert.ok(r.timings.speculative.drafted > 0);
      assert.equal(r.timings.speculative.accepted, r.timings.speculative.drafted);
      assert.equal(await metric(server.base, 'spec_accepted_tokens_total'),
                   await metric(server.base, 'spec_drafted_tokens_total'));
    } finally {
      assert.equal((await server.stop())?.code, 0);
    }
  });
});
