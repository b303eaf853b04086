// OpenAI's Responses API (POST /v1/responses) against `tandem serve` on the bundled trained pair
// (models/), through the official openai SDK: a plain response (greedy, equal to the chat
// route's answer for the same messages), a raw event stream and the SDK's stream helper, text.format
// json_schema validated by ajv, a forced function call and its round trip through
// function_call_output, and 400s naming a field tandem does not implement. The response store:
// a two-turn conversation through previous_response_id (greedy, equal to the chat route's answer
// to the same two turns), responses.retrieve and .delete, eviction by count (a server with
// --responses-store-count 2) and a server without a store refusing store and
// previous_response_id.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Ajv from 'ajv';
import { MODEL_ID, skipReason, startServer } from './server_harness.mjs';

const ajv = new Ajv({ strict: false, allErrors: true });

const weatherParams = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 16 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city', 'days'],
  additionalProperties: false,
};
const tools = [{ type: 'function', name: 'get_weather', description: 'Weather for a city', parameters: weatherParams, strict: true }];

const personSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    role: { enum: ['admin', 'user', 'guest'] },
  },
  required: ['name', 'age', 'role'],
  additionalProperties: false,
};

describe('responses', { skip: skipReason() ?? false, timeout: 170000 }, () => {
  let server;
  let client;

  before(async () => {
    server = await startServer(['-c', '4096', '--parallel', '2']);
    client = new OpenAI({ apiKey: 'none', baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  test('a plain response: output_text, usage, echoed fields; greedy equals the chat route', async () => {
    const r = await client.responses.create({
      model: MODEL_ID(), instructions: 'Answer briefly.', input: 'Name a colour.', max_output_tokens: 40,
      temperature: 0, metadata: { run: 'one' }, store: false,
    });
    assert.equal(r.object, 'response');
    assert.match(r.id, /^resp_/);
    assert.ok(r.output_text.length > 0, JSON.stringify(r.output));
    assert.ok(['completed', 'incomplete'].includes(r.status));
    if (r.status === 'incomplete') assert.equal(r.incomplete_details.reason, 'max_output_tokens');
    assert.deepEqual(r.metadata, { run: 'one' });
    assert.equal(r.instructions, 'Answer briefly.');
    assert.equal(r.max_output_tokens, 40);
    assert.equal(r.store, false);
    assert.ok(r.usage.input_tokens > 0 && r.usage.output_tokens > 0);
    assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
    assert.ok(r.timings && r.timings.speculative, 'tandem timings with speculative stats');
    const message = r.output.find((item) => item.type === 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.content[0].type, 'output_text');
    assert.equal(message.status, r.status, 'the message cut off by max_output_tokens is incomplete');

    const chat = await client.chat.completions.create({
      model: MODEL_ID(), max_tokens: 40, temperature: 0,
      messages: [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: 'Name a colour.' }],
    });
    assert.equal(r.output_text, chat.choices[0].message.content);
  });

  test('a streamed response: typed events in order, deltas add up to the final text', async () => {
    const body = { model: MODEL_ID(), input: [{ role: 'user', content: [{ type: 'input_text', text: 'Count to five.' }] }],
      max_output_tokens: 30, temperature: 0 };
    const whole = await client.responses.create(body);
    const events = [];
    for await (const event of await client.responses.create({ ...body, stream: true })) events.push(event);
    const types = events.map((e) => e.type);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    assert.equal(types[0], 'response.created');
    assert.equal(types[1], 'response.in_progress');
    assert.ok(['response.completed', 'response.incomplete'].includes(types.at(-1)), types.join());
    const order = ['response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done'];
    const positions = order.map((t) => types.indexOf(t));
    assert.ok(positions.every((p, i) => p > 1 && (i === 0 || p > positions[i - 1])), types.join());
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    const done = events.find((e) => e.type === 'response.output_text.done');
    assert.equal(done.text, deltas);
    const final = events.at(-1).response;
    assert.equal(final.output.find((i) => i.type === 'message').content[0].text, deltas);
    assert.equal(deltas, whole.output_text);
    assert.ok(final.usage.output_tokens > 0);
    assert.ok(final.timings.speculative);
  });

  test('client.responses.stream: the helper accumulates the same text', async () => {
    let seen = '';
    const stream = client.responses.stream({ model: MODEL_ID(), input: 'Say hello.', max_output_tokens: 20, temperature: 0 });
    stream.on('response.output_text.delta', (e) => { seen += e.delta; });
    const final = await stream.finalResponse();
    assert.ok(final.output_text.length > 0);
    assert.equal(final.output_text, seen);
  });

  test('text.format json_schema: the output validates', async () => {
    const r = await client.responses.create({
      model: MODEL_ID(), input: 'A user record:', max_output_tokens: 300, temperature: 0,
      text: { format: { type: 'json_schema', name: 'person', schema: personSchema, strict: true } },
    });
    assert.equal(r.status, 'completed', r.output_text);
    const person = JSON.parse(r.output_text);
    const validate = ajv.compile(personSchema);
    assert.ok(validate(person), `${r.output_text}: ${ajv.errorsText(validate.errors)}`);
    assert.equal(r.text.format.type, 'json_schema');
  });

  test('a forced function call, then its output gives a message', async () => {
    const input = [{ role: 'user', content: 'Weather in Rome for 2 days?' }];
    const r = await client.responses.create({
      model: MODEL_ID(), input, tools, tool_choice: 'required', parallel_tool_calls: false,
      max_output_tokens: 200, temperature: 0,
    });
    const calls = r.output.filter((item) => item.type === 'function_call');
    assert.equal(calls.length, 1, JSON.stringify(r.output));
    assert.equal(calls[0].name, 'get_weather');
    assert.match(calls[0].call_id, /^call_/);
    assert.equal(calls[0].status, 'completed');
    const args = JSON.parse(calls[0].arguments);
    assert.ok(ajv.validate(weatherParams, args), calls[0].arguments);

    // The streamed form carries the same call through the helper's snapshot.
    const stream = client.responses.stream({
      model: MODEL_ID(), input, tools, tool_choice: 'required', parallel_tool_calls: false,
      max_output_tokens: 200, temperature: 0,
    });
    let argDeltas = '';
    stream.on('response.function_call_arguments.delta', (e) => { argDeltas += e.delta; });
    const streamed = await stream.finalResponse();
    const streamedCall = streamed.output.find((item) => item.type === 'function_call');
    assert.equal(streamedCall.arguments, calls[0].arguments);
    assert.equal(argDeltas, calls[0].arguments);

    const next = await client.responses.create({
      model: MODEL_ID(), tools, max_output_tokens: 60, temperature: 0,
      tool_choice: 'none',
      input: [...input, ...r.output, { type: 'function_call_output', call_id: calls[0].call_id, output: '{"sky": "sunny", "celsius": 24}' }],
    });
    const message = next.output.find((item) => item.type === 'message');
    assert.ok(message, JSON.stringify(next.output));
  });

  test('fields tandem does not implement are 400s naming them', async () => {
    const post = async (body) => {
      const r = await fetch(`${server.base}/v1/responses`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      return { status: r.status, body: await r.json() };
    };
    let r = await post({ model: MODEL_ID(), input: 'x', frobnicate: true });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /^frobnicate: unknown field/);
    r = await post({ model: MODEL_ID(), input: 'x', store: 'yes' });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /^store: expected a boolean/);
  });

  test('previous_response_id: the second turn equals the chat route on the same two turns (greedy)', async () => {
    const opts = { model: MODEL_ID(), instructions: 'Answer briefly.', max_output_tokens: 40, temperature: 0 };
    const first = await client.responses.create({ ...opts, input: 'Name a colour.' });
    assert.equal(first.store, true, 'no store field: stored, as OpenAI does');
    // Instructions are not carried over: the second turn gives its own.
    const second = await client.responses.create({ ...opts, input: 'Name another one.', previous_response_id: first.id });
    assert.equal(second.previous_response_id, first.id);
    assert.ok(second.output_text.length > 0, JSON.stringify(second.output));

    const reasoning = first.output.filter((item) => item.type === 'reasoning')
      .map((item) => item.content.map((part) => part.text).join('')).join('');
    const assistant = { role: 'assistant', content: first.output_text };
    if (reasoning) assistant.reasoning_content = reasoning;
    const chat = await client.chat.completions.create({
      model: MODEL_ID(), max_tokens: 40, temperature: 0,
      messages: [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: 'Name a colour.' },
        assistant, { role: 'user', content: 'Name another one.' }],
    });
    assert.equal(second.output_text, chat.choices[0].message.content);
    assert.equal(second.usage.input_tokens, chat.usage.prompt_tokens);
    assert.ok(second.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens,
      'the first turn and its answer are in the second prompt');
  });

  test('client.responses.retrieve returns a stored response, streamed ones too; .delete removes it', async () => {
    const created = await client.responses.create({ model: MODEL_ID(), input: 'Say hi.', max_output_tokens: 12, temperature: 0 });
    const got = await client.responses.retrieve(created.id);
    assert.equal(got.id, created.id);
    assert.equal(got.status, created.status);
    assert.deepEqual(got.output, created.output);
    assert.deepEqual(got.usage, created.usage);
    assert.equal(got.output_text, created.output_text);

    const final = await client.responses.stream({ model: MODEL_ID(), input: 'Say bye.', max_output_tokens: 12, temperature: 0 })
      .finalResponse();
    assert.equal(final.store, true);
    const gotStreamed = await client.responses.retrieve(final.id);
    // (the stream helper adds `parsed` to the text parts it returns; the items are the same)
    assert.deepEqual(gotStreamed.output.map((item) => [item.id, item.type, item.status]),
      final.output.map((item) => [item.id, item.type, item.status]));
    assert.equal(gotStreamed.output_text, final.output_text);
    assert.deepEqual(gotStreamed.usage, final.usage);

    await client.responses.delete(created.id);
    await assert.rejects(client.responses.retrieve(created.id),
      (e) => e.status === 404 && new RegExp(`Response with id '${created.id}' not found`).test(e.message));
    await assert.rejects(client.responses.delete(created.id), (e) => e.status === 404);
    await assert.rejects(
      client.responses.create({ model: MODEL_ID(), input: 'x', previous_response_id: created.id }),
      (e) => e.status === 404 && /^404 previous_response_id: Previous response with id/.test(e.message));
    // The streamed one is still there.
    assert.equal((await client.responses.retrieve(final.id)).id, final.id);
  });
});

describe('responses store limits', { skip: skipReason() ?? false, timeout: 170000 }, () => {
  const clientOf = (server) => new OpenAI({ apiKey: 'none', baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });

  test('--responses-store-count 2: the least recently used response is evicted (404)', async () => {
    const server = await startServer(['--responses-store-count', '2', '--no-warmup']);
    try {
      const client = clientOf(server);
      const create = () => client.responses.create({ model: MODEL_ID(), input: 'Hi.', max_output_tokens: 4, temperature: 0 });
      const a = await create();
      const b = await create();
      await client.responses.retrieve(a.id);  // a is now more recent than b
      const c = await create();
      await assert.rejects(client.responses.retrieve(b.id), (e) => e.status === 404);
      await assert.rejects(
        client.responses.create({ model: MODEL_ID(), input: 'x', previous_response_id: b.id, max_output_tokens: 4 }),
        (e) => e.status === 404 && /previous_response_id: Previous response with id .* not found/.test(e.message));
      assert.equal((await client.responses.retrieve(a.id)).id, a.id);
      assert.equal((await client.responses.retrieve(c.id)).id, c.id);
    } finally {
      assert.equal((await server.stop())?.code, 0);
    }
  });

  test('--responses-store-bytes 0: no store; store: true and previous_response_id are 400s saying so', async () => {
    const server = await startServer(['--responses-store-bytes', '0', '--no-warmup']);
    try {
      const client = clientOf(server);
      const r = await client.responses.create({ model: MODEL_ID(), input: 'Hi.', max_output_tokens: 4, temperature: 0 });
      assert.equal(r.store, false);
      await assert.rejects(client.responses.retrieve(r.id), (e) => e.status === 404 && /keeps no responses/.test(e.message));
      await assert.rejects(
        client.responses.create({ model: MODEL_ID(), input: 'x', store: true }),
        (e) => e.status === 400 && /store: this server keeps no responses .*--responses-store-count/.test(e.message));
      await assert.rejects(
        client.responses.create({ model: MODEL_ID(), input: 'x', previous_response_id: r.id }),
        (e) => e.status === 400 && /previous_response_id: this server keeps no responses/.test(e.message));
    } finally {
      assert.equal((await server.stop())?.code, 0);
    }
  });
});
