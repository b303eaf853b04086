// Structured output against `tandem serve` on the bundled trained pair (models/): OpenAI
// response_format through the official SDK's zod helper and as raw json_schema, json_object,
// llama-server's grammar and json_schema fields, and forced tool calls through both SDKs. Every
// constrained output is checked by independent validators (ajv + ajv-formats, zod, a regex),
// greedy output with speculation is byte-identical to greedy output without it, and bad
// constraints are 400s naming the field, the keyword and its path.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { MODEL_ID, metric, skipReason, startServer } from './server_harness.mjs';

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

function assertValid(schema, value, what) {
  const validate = ajv.compile(schema);
  assert.ok(validate(value), `${what}: ${JSON.stringify(value)} is invalid: ${ajv.errorsText(validate.errors)}`);
}

const user = (content) => [{ role: 'user', content }];

// Bounded lengths keep the tiny model's documents short (it writes long strings if allowed).
const personSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    born: { type: 'string', format: 'date' },
    id: { type: 'string', format: 'uuid' },
    role: { enum: ['admin', 'user', 'guest'] },
    score: { anyOf: [{ type: 'number', minimum: 0 }, { type: 'null' }] },
    tags: { type: 'array', items: { $ref: '#/$defs/tag' }, minItems: 1, maxItems: 3 },
  },
  required: ['name', 'age', 'born', 'id', 'role', 'score', 'tags'],
  additionalProperties: false,
  $defs: { tag: { type: 'string', maxLength: 6 } },
};

const weatherParams = {
  type: 'object',
  properties: {
    city: { type: 'string', maxLength: 16 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    unit: { enum: ['C', 'F'] },
  },
  required: ['city', 'days'],
  additionalProperties: false,
};
const openaiTools = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherParams } },
  { type: 'function', function: { name: 'get_time', description: 'Time in a zone', parameters: { type: 'object', properties: { zone: { type: 'string', maxLength: 10 } }, required: ['zone'] } } },
];

describe('structured output', { skip: skipReason() ?? false, timeout: 170000 }, () => {
  let server;
  let client;
  let anthropic;

  before(async () => {
    server = await startServer(['-c', '4096', '--parallel', '2']);
    client = new OpenAI({ apiKey: 'none', baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });
    anthropic = new Anthropic({ apiKey: 'none', baseURL: server.base, maxRetries: 0, timeout: 60000 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  test('zodResponseFormat: the SDK parses and zod accepts the answer', async () => {
    const Person = z.object({
      name: z.string().max(12),
      age: z.number().int().min(0).max(120),
      city: z.enum(['Paris', 'Oslo', 'Rome']),
      tags: z.array(z.string().max(6)).max(3),
    });
    const format = zodResponseFormat(Person, 'person');
    const r = await client.chat.completions.parse({
      model: MODEL_ID(), messages: user('Describe a person as JSON.'), max_tokens: 400, temperature: 0,
      response_format: format,
    });
    const message = r.choices[0].message;
    assert.equal(r.choices[0].finish_reason, 'stop', message.content);
    assert.deepEqual(Person.parse(message.parsed), message.parsed);
    assertValid(format.json_schema.schema, JSON.parse(message.content), 'zod schema');
  });

  test('raw json_schema validates, and greedy speculation equals plain decoding', async () => {
    const body = {
      model: MODEL_ID(), messages: user('A user record:'), max_tokens: 500, temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema: personSchema, strict: true } },
    };
    const chain = await client.chat.completions.create(body);
    const mtp = await client.chat.completions.create({ ...body, speculative: { ngram: false } });
    const plain = await client.chat.completions.create({ ...body, speculative: { enabled: false } });
    assert.equal(chain.choices[0].finish_reason, 'stop');
    const person = JSON.parse(chain.choices[0].message.content);
    assertValid(personSchema, person, 'json_schema');
    // Properties come in the schema's order (as OpenAI's strict mode writes them), not by name.
    assert.deepEqual(Object.keys(person), Object.keys(personSchema.properties));
    assert.equal(chain.choices[0].message.content, plain.choices[0].message.content);
    assert.equal(mtp.choices[0].message.content, plain.choices[0].message.content);
    assert.equal(plain.timings.speculative.enabled, false);
    assert.ok(mtp.timings.speculative.drafted + mtp.timings.speculative.forced > 0, 'speculation ran');
    // Keys, brackets and enum tails are forced: drafted for free and reported as their own source.
    // (The adaptive controller may decode one run plainly: forced drafts ride on drafting rounds.)
    const spec = chain.timings.speculative;
    assert.ok(spec.forced + mtp.timings.speculative.forced > 0,
      JSON.stringify([spec, mtp.timings.speculative]));
    assert.ok(spec.forced_accepted <= spec.forced);
    assert.equal(typeof spec.by_source.grammar.drafted, 'number');
    assert.ok(spec.by_source.grammar.accepted <= spec.by_source.grammar.drafted);
  });

  test('sampled json_schema output validates too', async () => {
    for (const seed of [1, 2, 3]) {
      const r = await client.chat.completions.create({
        model: MODEL_ID(), messages: user('Another user:'), max_tokens: 500, temperature: 0.8, seed,
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema: personSchema } },
      });
      assert.equal(r.choices[0].finish_reason, 'stop');
      assertValid(personSchema, JSON.parse(r.choices[0].message.content), `seed ${seed}`);
    }
  });

  test('json_object: any JSON object', async () => {
    const r = await client.chat.completions.create({
      model: MODEL_ID(), messages: user('JSON please'), max_tokens: 300, temperature: 0,
      response_format: { type: 'json_object' },
    });
    const text = r.choices[0].message.content;
    if (r.choices[0].finish_reason === 'stop') {
      const value = JSON.parse(text);
      assert.equal(typeof value, 'object');
      assert.ok(value !== null && !Array.isArray(value));
    } else {
      assert.ok(text.startsWith('{'), text);  // cut by max_tokens: still a JSON object's start
    }
  });

  test('thinking stays unconstrained; the answer validates', async () => {
    const r = await client.chat.completions.create({
      model: MODEL_ID(), messages: user('Think, then answer.'), max_tokens: 600, temperature: 0,
      chat_template_kwargs: { enable_thinking: true },
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: weatherParams } },
    });
    if (r.choices[0].finish_reason === 'stop') {
      assertValid(weatherParams, JSON.parse(r.choices[0].message.content), 'answer after thinking');
    }
  });

  test("llama-server's grammar and json_schema on /v1/completions", async () => {
    const g = await (await fetch(`${server.base}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'def ', max_tokens: 40, temperature: 0,
        grammar: 'root ::= [a-z_]{1,20} "(" [a-z, ]{0,20} "):"' }),
    })).json();
    assert.match(g.choices[0].text, /^[a-z_]{1,20}\([a-z, ]{0,20}\):$/);
    const s = await (await fetch(`${server.base}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x = ', max_tokens: 200, temperature: 0, json_schema: weatherParams }),
    })).json();
    assertValid(weatherParams, JSON.parse(s.choices[0].text), 'json_schema field');
  });

  test('openai: tool_choice required / named function forces valid calls', async () => {
    const one = await client.chat.completions.create({
      model: MODEL_ID(), messages: user('What is the weather in Oslo?'), max_tokens: 300, temperature: 0,
      tools: openaiTools, tool_choice: 'required', parallel_tool_calls: false,
    });
    assert.equal(one.choices[0].finish_reason, 'tool_calls');
    const calls = one.choices[0].message.tool_calls;
    assert.equal(calls.length, 1);
    const params = { get_weather: weatherParams, get_time: openaiTools[1].function.parameters };
    assertValid(params[calls[0].function.name], JSON.parse(calls[0].function.arguments), 'required');
    const named = await client.chat.completions.create({
      model: MODEL_ID(), messages: user('Hello'), max_tokens: 300, temperature: 0.7, seed: 5,
      tools: openaiTools, tool_choice: { type: 'function', function: { name: 'get_time' } },
      parallel_tool_calls: false,
    });
    const call = named.choices[0].message.tool_calls[0];
    assert.equal(call.function.name, 'get_time');
    assertValid(params.get_time, JSON.parse(call.function.arguments), 'named');
  });

  test('anthropic: tool_choice any / tool forces valid tool_use blocks', async () => {
    const tools = [{ name: 'get_weather', description: 'Weather for a city', input_schema: weatherParams }];
    for (const choice of [{ type: 'any', disable_parallel_tool_use: true }, { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true }]) {
      const r = await anthropic.messages.create({
        model: MODEL_ID(), max_tokens: 300, messages: user('Weather in Rome?'), tools, tool_choice: choice,
      });
      assert.equal(r.stop_reason, 'tool_use', JSON.stringify(r.content));
      const uses = r.content.filter((b) => b.type === 'tool_use');
      assert.equal(uses.length, 1);
      assert.equal(uses[0].name, 'get_weather');
      assertValid(weatherParams, uses[0].input, `anthropic ${choice.type}`);
    }
  });

  test('bad constraints are 400s naming the field, keyword and path', async () => {
    const post = async (path, body) => {
      const r = await fetch(`${server.base}${path}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      return { status: r.status, message: (await r.json()).error.message };
    };
    const chat = { messages: user('x'), max_tokens: 5 };
    let r = await post('/v1/chat/completions', { ...chat, response_format: { type: 'json_schema',
      json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string', minContains: 1 } } } } } });
    assert.equal(r.status, 400);
    assert.match(r.message, /response_format\.json_schema\.schema.*'minContains' at \/properties\/a\/minContains/);
    r = await post('/v1/completions', { prompt: 'x', max_tokens: 5, grammar: 'root ::= item+' });
    assert.equal(r.status, 400);
    assert.match(r.message, /^grammar: .*'item'/);
    r = await post('/v1/chat/completions', { ...chat, grammar: 'root ::= "a"', response_format: { type: 'json_object' } });
    assert.equal(r.status, 400);
    assert.match(r.message, /grammar and response_format both constrain/);
    r = await post('/v1/chat/completions', { ...chat, json_schema: { type: 'object' }, tools: openaiTools, tool_choice: 'required' });
    assert.equal(r.status, 400);
    assert.match(r.message, /tool_choice forces a tool call and json_schema/);
    r = await post('/v1/chat/completions', { ...chat, tool_choice: 'required', tools: [{ type: 'function',
      function: { name: 'f', parameters: { type: 'object', properties: { s: { type: 'string', pattern: 'a+' } } } } }] });
    assert.equal(r.status, 400);
    assert.match(r.message, /tool_choice: tools\[0\] \('f'\) parameters: .*'pattern' at \/properties\/s\/pattern/);
    r = await post('/v1/chat/completions', { ...chat, response_format: { type: 'xml' } });
    assert.equal(r.status, 400);
    assert.match(r.message, /response_format\.type/);
  });

  test('sampled json_schema: layout guesses are drafted, counted apart, and the output validates', async () => {
    // A sampled request prices its rows statically (its drafts must not depend on timings), so
    // the trained pair's repeated layout ("\n" and the same indentation before each ",") is
    // guessed; the counts come back in `timings` and /metrics.
    const before = await metric(server.base, 'spec_layout_guess_tokens_total');
    let guessed = 0;
    let guessedAccepted = 0;
    for (const seed of [1, 2, 3]) {
      const r = await client.chat.completions.create({
        model: MODEL_ID(), messages: user('Describe read_lines as JSON.'), max_tokens: 300,
        temperature: 0.7, seed,
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema: personSchema, strict: true } },
      });
      if (r.choices[0].finish_reason === 'stop') {
        assertValid(personSchema, JSON.parse(r.choices[0].message.content), `seed ${seed}`);
      }
      const s = r.timings.speculative;
      assert.ok(s.guessed_accepted >= 0 && s.guessed_accepted <= s.guessed, JSON.stringify(s));
      guessed += s.guessed;
      guessedAccepted += s.guessed_accepted;
    }
    assert.ok(guessed > 0, 'no layout guesses in three sampled requests');
    assert.equal(await metric(server.base, 'spec_layout_guess_tokens_total'), before + guessed);
    assert.ok(await metric(server.base, 'spec_layout_guess_accepted_tokens_total') >= guessedAccepted);
  });

  test('/metrics counts grammar-forced drafts', async () => {
    const forced = await metric(server.base, 'spec_forced_tokens_total');
    const accepted = await metric(server.base, 'spec_forced_accepted_tokens_total');
    assert.ok(forced > 0, `forced ${forced}`);
    assert.ok(accepted >= 0 && accepted <= forced);
    assert.notEqual(await metric(server.base, 'spec_source_drafted_tokens_total', 'source="grammar"'), undefined);
  });
});
