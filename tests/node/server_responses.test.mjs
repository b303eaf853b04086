// OpenAI's Responses API (POST /v1/responses) against `tandem serve` on the bundled trained pair
// (models/), through the official openai SDK: a plain response (greedy, equal to the chat
// route's answer for the same messages), a raw event stream and the SDK's stream helper, text.format
// json_schema validated by ajv, a forced function call and its round trip through
// function_call_output, and 400s naming a field tandem does not implement.
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
    r = await post({ model: MODEL_ID(), input: 'x', previous_response_id: 'resp_123' });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /previous_response_id: responses are not stored/);
    await assert.rejects(
      client.responses.create({ model: MODEL_ID(), input: 'x', store: true }),
      (e) => e.status === 400 && /store: responses are not stored/.test(e.message));
  });
});
