// The official `openai` client against `tandem serve` on the tiny generated model: chat (whole
// and streamed), completions, models, tool definitions and tool messages, speculation control,
// seeded determinism, and the error shapes the SDK turns into typed errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { MODEL_ID, metric, skipReason, startServer } from './server_harness.mjs';

const KEY = 'test-key-openai';
const user = (content) => [{ role: 'user', content }];

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name' } },
      required: ['city'],
    },
  },
};

describe('openai SDK', { skip: skipReason() ?? false, timeout: 150000 }, () => {
  let server;
  let client;

  before(async () => {
    server = await startServer(['--api-key', KEY, '--parallel', '3']);
    client = new OpenAI({ apiKey: KEY, baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  test('lists the loaded model', async () => {
    const models = await client.models.list();
    assert.deepEqual(models.data.map((m) => m.id), [MODEL_ID()]);
  });

  test('chat completion carries content, usage and timings', async () => {
    const r = await client.chat.completions.create({
      model: MODEL_ID(), messages: user('Hello there'), max_tokens: 12, temperature: 0,
    });
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.choices.length, 1);
    const choice = r.choices[0];
    assert.equal(choice.message.role, 'assistant');
    assert.ok(['stop', 'length', 'tool_calls'].includes(choice.finish_reason));
    assert.ok(r.usage.prompt_tokens > 5);
    assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 12);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
    assert.equal(typeof r.usage.prompt_tokens_details.cached_tokens, 'number');
    assert.equal(r.timings.predicted_n, r.usage.completion_tokens);
    assert.equal(r.timings.prompt_n, r.usage.prompt_tokens);
    assert.equal(r.timings.speculative.enabled, true);
    assert.equal(r.timings.speculative.type, 'chain'); // auto with an assistant: lookup + MTP
  });

  test('streamed chat equals the whole response and ends with usage', async () => {
    const body = { model: MODEL_ID(), messages: user('Stream me'), max_tokens: 16, temperature: 0 };
    const whole = await client.chat.completions.create(body);
    const stream = await client.chat.completions.create({
      ...body, stream: true, stream_options: { include_usage: true },
    });
    let content = '';
    let finish = null;
    let usage = null;
    let roleSeen = false;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      if (chunk.choices.length === 0) continue;
      const delta = chunk.choices[0].delta;
      if (delta.role === 'assistant') roleSeen = true;
      content += delta.content ?? '';
      finish = chunk.choices[0].finish_reason ?? finish;
    }
    assert.ok(roleSeen);
    assert.equal(content, whole.choices[0].message.content ?? '');
    assert.equal(finish, whole.choices[0].finish_reason);
    assert.equal(usage.completion_tokens, whole.usage.completion_tokens);
  });

  test('completions, whole and streamed', async () => {
    const body = { model: MODEL_ID(), prompt: 'Once upon a time', max_tokens: 10, temperature: 0 };
    const r = await client.completions.create(body);
    assert.equal(r.object, 'text_completion');
    assert.equal(typeof r.choices[0].text, 'string');
    assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 10);
    let text = '';
    for await (const chunk of await client.completions.create({ ...body, stream: true })) {
      text += chunk.choices[0]?.text ?? '';
    }
    assert.equal(text, r.choices[0].text);
  });

  test('tool definitions and tool messages round-trip into the prompt', async () => {
    const base = { model: MODEL_ID(), max_tokens: 4, temperature: 0 };
    const plain = await client.chat.completions.create({ ...base, messages: user('Weather in Paris?') });
    const withTools = await client.chat.completions.create({
      ...base, messages: user('Weather in Paris?'), tools: [weatherTool],
    });
    assert.ok(withTools.usage.prompt_tokens > plain.usage.prompt_tokens + 10,
      'the tool declaration is rendered into the prompt');
    const none = await client.chat.completions.create({
      ...base, messages: user('Weather in Paris?'), tools: [weatherTool], tool_choice: 'none',
    });
    assert.equal(none.usage.prompt_tokens, plain.usage.prompt_tokens);
    const roundTrip = await client.chat.completions.create({
      ...base,
      tools: [weatherTool],
      messages: [
        ...user('Weather in Paris?'),
        {
          role: 'assistant', content: null,
          tool_calls: [{ id: 'call_1', type: 'function',
                         function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 C' },
      ],
    });
    assert.ok(roundTrip.usage.prompt_tokens > withTools.usage.prompt_tokens);
    assert.equal(roundTrip.choices[0].message.role, 'assistant');
  });

  test('per-request speculation control is reported in timings', async () => {
    const body = { model: MODEL_ID(), messages: user('Speculate'), max_tokens: 24, temperature: 0 };
    // Options no earlier request had: a greedy request continues the estimates of the slot's last
    // one only when its options match (docs/mtp.md § Draft length), so this one starts from the
    // prior, which drafts its first round.
    const on = await client.chat.completions.create({ ...body, speculative: { draft_max: 5 } });
    const off = await client.chat.completions.create({ ...body, speculative: { enabled: false } });
    const two = await client.chat.completions.create({ ...body, speculative: { draft_max: 2 } });
    assert.equal(off.timings.speculative.enabled, false);
    assert.equal(off.timings.draft_n, 0);
    assert.equal(two.timings.speculative.draft_max, 2);
    assert.ok(on.timings.speculative.drafted > 0, 'the assistant drafted');
    // Greedy output does not depend on speculation.
    assert.equal(off.choices[0].message.content, on.choices[0].message.content);
    assert.equal(two.choices[0].message.content, on.choices[0].message.content);
  });

  test('metrics show drafting per slot, adding up to the totals', async () => {
    const body = (i) => ({ model: MODEL_ID(), messages: user(`slot ${i}`), max_tokens: 32, temperature: 0 });
    await Promise.all([0, 1, 2].map((i) => client.chat.completions.create(body(i))));
    const auth = { Authorization: `Bearer ${KEY}` };
    let drafted = 0;
    let accepted = 0;
    for (const slot of [0, 1, 2]) {
      const label = `slot="${slot}"`;
      assert.equal(await metric(server.base, 'slot_busy', label, auth), 0);
      drafted += await metric(server.base, 'slot_spec_drafted_tokens_total', label, auth);
      accepted += await metric(server.base, 'slot_spec_accepted_tokens_total', label, auth);
    }
    assert.ok(drafted > 0, 'slots drafted');
    assert.equal(drafted, await metric(server.base, 'spec_drafted_tokens_total', '', auth));
    assert.equal(accepted, await metric(server.base, 'spec_accepted_tokens_total', '', auth));
  });

  // Runs `body` alone, then again while two other requests generate; returns both contents.
  async function aloneAndBusy(body) {
    const alone = await client.chat.completions.create(body);
    const noise = (i) => client.chat.completions.create({
      model: MODEL_ID(), messages: user(`noise ${i}`), max_tokens: 24, temperature: 0.7, seed: i,
    });
    const [busy] = await Promise.all([client.chat.completions.create(body), noise(1), noise(2)]);
    return [alone.choices[0].message.content, busy.choices[0].message.content];
  }

  test('same seed gives the same output next to other requests (sampling, no speculation)',
    async () => {
      const [alone, busy] = await aloneAndBusy({
        model: MODEL_ID(), messages: user('Roll the dice'), max_tokens: 16, temperature: 0.9,
        seed: 1234, speculative: { enabled: false },
      });
      assert.equal(busy, alone);
    });

  test('greedy output is the same next to other requests (speculation on)', async () => {
    const [alone, busy] = await aloneAndBusy({
      model: MODEL_ID(), messages: user('Be greedy'), max_tokens: 16, temperature: 0,
    });
    assert.equal(busy, alone);
  });

  // Sampled requests choose draft lengths from acceptance and a static cost model (never from
  // measured times), so the seed alone fixes the output, whatever else the server is doing.
  test('same seed gives the same output next to other requests (sampling, speculation on)',
    async () => {
      const [alone, busy] = await aloneAndBusy({
        model: MODEL_ID(), messages: user('Roll the dice'), max_tokens: 16, temperature: 0.9,
        seed: 1234,
      });
      assert.equal(busy, alone);
    });

  test('seeds above 2^32 are used whole, not truncated', async () => {
    const roll = async (seed) => (await client.chat.completions.create({
      model: MODEL_ID(), messages: user('Seeds'), max_tokens: 24, temperature: 1.5, seed,
    })).choices[0].message.content;
    const big = 2 ** 40 + 7;
    const [a, again, low] = [await roll(big), await roll(big), await roll(7)];
    assert.equal(again, a);
    assert.notEqual(a, low, 'seed 2^40 + 7 must not act as seed 7');
  });

  test('a repeated conversation reuses the prompt cache', async () => {
    const messages = user('A long enough opening message so the cache matters a little bit');
    await client.chat.completions.create({ model: MODEL_ID(), messages, max_tokens: 2, temperature: 0 });
    const again = await client.chat.completions.create({
      model: MODEL_ID(), messages, max_tokens: 2, temperature: 0,
    });
    assert.ok(again.usage.prompt_tokens_details.cached_tokens > 0);
    assert.equal(again.timings.cache_n, again.usage.prompt_tokens_details.cached_tokens);
  });

  test('a wrong API key is an AuthenticationError', async () => {
    const bad = new OpenAI({ apiKey: 'wrong', baseURL: `${server.base}/v1`, maxRetries: 0 });
    await assert.rejects(bad.models.list(), (e) => {
      assert.ok(e instanceof OpenAI.AuthenticationError);
      assert.equal(e.status, 401);
      assert.equal(e.error.type, 'authentication_error');
      return true;
    });
  });

  test('bad requests are BadRequestError with a clear message', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: MODEL_ID(), messages: [] }),
      (e) => e instanceof OpenAI.BadRequestError && /messages must not be empty/.test(e.message));
    await assert.rejects(
      client.chat.completions.create({ model: MODEL_ID(), messages: user('x'), temperature: 'hot' }),
      (e) => e.status === 400 && /temperature/.test(e.message));
    await assert.rejects(
      client.chat.completions.create({ model: MODEL_ID(), messages: user('x'.repeat(6000)) }),
      (e) => e.status === 400 && /context/.test(e.message));
    await assert.rejects(
      client.chat.completions.create({ model: 'no-such-model', messages: user('x') }),
      (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
  });
});
