// The official `@anthropic-ai/sdk` client against `tandem serve` on the tiny generated model:
// messages (whole and streamed with the documented event sequence), count_tokens, system
// prompts, thinking, tool_use / tool_result round trip, and error shapes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { MODEL_ID, skipReason, startServer } from './server_harness.mjs';

const KEY = 'test-key-anthropic';
const user = (content) => [{ role: 'user', content }];

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string', description: 'City name' } },
    required: ['city'],
  },
};

describe('anthropic SDK', { skip: skipReason() ?? false, timeout: 150000 }, () => {
  let server;
  let client;

  before(async () => {
    server = await startServer(['--api-key', KEY, '--parallel', '2']);
    client = new Anthropic({ apiKey: KEY, baseURL: server.base, maxRetries: 0, timeout: 60000 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  test('a message has content blocks, a stop reason and usage', async () => {
    const m = await client.messages.create({
      model: MODEL_ID(), max_tokens: 12, temperature: 0, messages: user('Hello there'),
    });
    assert.equal(m.type, 'message');
    assert.equal(m.role, 'assistant');
    assert.equal(m.model, MODEL_ID());
    assert.ok(m.id.startsWith('msg_'));
    assert.ok(m.content.length >= 1);
    for (const block of m.content) assert.ok(['text', 'thinking', 'tool_use'].includes(block.type));
    assert.ok(['end_turn', 'max_tokens', 'tool_use', 'stop_sequence'].includes(m.stop_reason));
    assert.ok(m.usage.input_tokens + m.usage.cache_read_input_tokens > 5);
    assert.ok(m.usage.output_tokens >= 1 && m.usage.output_tokens <= 12);
  });

  test('streaming follows the documented event sequence and matches the whole message',
    async () => {
      const body = { model: MODEL_ID(), max_tokens: 16, temperature: 0, messages: user('Stream') };
      const whole = await client.messages.create(body);
      const stream = client.messages.stream(body);
      const events = [];
      for await (const event of stream) events.push(event.type);
      const final = await stream.finalMessage();
      assert.equal(events[0], 'message_start');
      assert.equal(events.at(-1), 'message_stop');
      assert.equal(events.at(-2), 'message_delta');
      assert.ok(events.includes('content_block_start'));
      assert.ok(events.includes('content_block_stop'));
      const text = (m) => m.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
      assert.equal(text(final), text(whole));
      assert.equal(final.stop_reason, whole.stop_reason);
      assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
    });

  test('message_start and message_delta agree on input tokens when the cache serves some',
    async () => {
      const body = { model: MODEL_ID(), max_tokens: 4, temperature: 0,
                     messages: user('A long enough opening so that the prompt cache matters') };
      await client.messages.create(body);
      const stream = client.messages.stream(body);
      let start;
      let delta;
      for await (const event of stream) {
        if (event.type === 'message_start') start = event.message.usage;
        if (event.type === 'message_delta') delta = event.usage;
      }
      assert.ok(delta.cache_read_input_tokens > 0, 'the repeated prompt was cached');
      assert.equal(start.input_tokens, delta.input_tokens);
      assert.equal(start.cache_read_input_tokens, delta.cache_read_input_tokens);
    });

  test('the first streamed event arrives before generation ends', async () => {
    const response = await fetch(`${server.base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL_ID(), max_tokens: 400, stream: true,
                             messages: user('long one') }),
    });
    const reader = response.body.getReader();
    const { value } = await reader.read();
    const first = new TextDecoder().decode(value);
    assert.match(first, /^event: message_start\n/);
    await reader.cancel();
  });

  test('count_tokens counts system, thinking and tools', async () => {
    const count = (extra) => client.messages.countTokens({
      model: MODEL_ID(), messages: user('Weather in Paris?'), ...extra,
    }).then((r) => r.input_tokens);
    const plain = await count({});
    assert.ok(plain > 5);
    assert.ok(await count({ system: 'You are terse.' }) > plain);
    assert.ok(await count({ thinking: { type: 'enabled', budget_tokens: 1024 } }) > plain);
    assert.ok(await count({ tools: [weatherTool] }) > plain + 10);
    const m = await client.messages.create({
      model: MODEL_ID(), max_tokens: 2, messages: user('Weather in Paris?'),
    });
    assert.equal(m.usage.input_tokens + m.usage.cache_read_input_tokens, plain);
  });

  test('tool_use and tool_result blocks round-trip into the prompt', async () => {
    const messages = [
      ...user('Weather in Paris?'),
      { role: 'assistant', content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
      ] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'toolu_01', content: 'sunny, 21 C' },
      ] },
    ];
    const before = await client.messages.countTokens({ model: MODEL_ID(), messages: user('Weather in Paris?'), tools: [weatherTool] });
    const after = await client.messages.countTokens({ model: MODEL_ID(), messages, tools: [weatherTool] });
    assert.ok(after.input_tokens > before.input_tokens + 10);
    const m = await client.messages.create({
      model: MODEL_ID(), max_tokens: 4, temperature: 0, messages, tools: [weatherTool],
    });
    assert.equal(m.role, 'assistant');
  });

  test('a wrong API key is an AuthenticationError', async () => {
    const bad = new Anthropic({ apiKey: 'wrong', baseURL: server.base, maxRetries: 0 });
    await assert.rejects(
      bad.messages.create({ model: MODEL_ID(), max_tokens: 4, messages: user('x') }),
      (e) => {
        assert.ok(e instanceof Anthropic.AuthenticationError);
        assert.equal(e.status, 401);
        assert.equal(e.error.type, 'error');
        assert.equal(e.error.error.type, 'authentication_error');
        return true;
      });
  });

  test('bad requests are BadRequestError with the Anthropic error shape', async () => {
    await assert.rejects(
      client.messages.create({ model: MODEL_ID(), max_tokens: 4, messages: [] }),
      (e) => e instanceof Anthropic.BadRequestError &&
        e.error.error.type === 'invalid_request_error' && /empty/.test(e.message));
    await assert.rejects(
      client.messages.create({ model: MODEL_ID(), max_tokens: 4,
                               messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }),
      (e) => e.status === 400 && /messages\[0\]\.content\[0\]\.source/.test(e.message));
    await assert.rejects(
      client.messages.create({ model: MODEL_ID(), max_tokens: 4,
                               messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }),
      (e) => e.status === 400 && /not supported/.test(e.message));
    await assert.rejects(
      client.messages.create({ model: 'claude-nope', max_tokens: 4, messages: user('x') }),
      (e) => e instanceof Anthropic.NotFoundError && e.error.error.type === 'not_found_error');
  });
});
