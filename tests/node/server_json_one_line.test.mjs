// One-line JSON (vLLM's disable_any_whitespace) against `tandem serve` on the bundled trained pair,
// through the official openai SDK: the server's --json-one-line and the request's
// structured_outputs.disable_any_whitespace, which overrides it either way. Every output is
// validated by ajv, its whitespace is checked by a scanner of its own (exactly one space after
// each `,` and `:` outside strings, none anywhere else), and greedy output with speculation is
// byte-identical to greedy output without it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Ajv from 'ajv';
import { MODEL_ID, skipReason, startServer } from './server_harness.mjs';

const ajv = new Ajv({ strict: false, allErrors: true });

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    kind: { enum: ['function', 'class', 'module'] },
    args: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 3 },
    lines: { type: 'integer', minimum: 0, maximum: 999 },
    pure: { type: 'boolean' },
  },
  required: ['name', 'kind', 'args', 'lines', 'pure'],
  additionalProperties: false,
};

function assertValid(value, what) {
  const validate = ajv.compile(schema);
  assert.ok(validate(value), `${what}: ${JSON.stringify(value)} is invalid: ${ajv.errorsText(validate.errors)}`);
}

// Whether `text` is written as one line in the `, ` / `: ` style: outside strings, every `,` and
// `:` is followed by exactly one space, and no other whitespace occurs.
function isOneLine(text) {
  let inString = false;
  for (let i = 0; i < text.length; ++i) {
    const c = text[i];
    if (inString) {
      if (c === '\\') ++i;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
    } else if (c === ',' || c === ':') {
      if (text[i + 1] !== ' ' || /\s/.test(text[i + 2] ?? '')) return false;
      ++i;
    } else if (/\s/.test(c)) {
      return false;
    }
  }
  return !inString;
}

const user = (content) => [{ role: 'user', content }];
const format = { type: 'json_schema', json_schema: { name: 'symbol', schema, strict: true } };

// The same greedy request with chained speculation (the default), MTP alone and none.
async function threeWays(client, body) {
  const chain = await client.chat.completions.create(body);
  const mtp = await client.chat.completions.create({ ...body, speculative: { ngram: false } });
  const plain = await client.chat.completions.create({ ...body, speculative: { enabled: false } });
  for (const r of [chain, mtp, plain]) assert.equal(r.choices[0].finish_reason, 'stop', r.choices[0].message.content);
  assert.equal(chain.choices[0].message.content, plain.choices[0].message.content);
  assert.equal(mtp.choices[0].message.content, plain.choices[0].message.content);
  return { chain, mtp, plain, text: plain.choices[0].message.content };
}

describe('one-line JSON', { skip: skipReason() ?? false, timeout: 170000 }, () => {
  let flexible;  // default whitespace
  let oneLine;   // --json-one-line
  let clients;

  before(async () => {
    [flexible, oneLine] = await Promise.all([
      startServer(['-c', '2048', '--parallel', '2']),
      startServer(['-c', '2048', '--parallel', '2', '--json-one-line']),
    ]);
    const client = (server) => new OpenAI({ apiKey: 'none', baseURL: `${server.base}/v1`, maxRetries: 0, timeout: 60000 });
    clients = { flexible: client(flexible), oneLine: client(oneLine) };
  });

  after(async () => {
    for (const server of [flexible, oneLine]) {
      const status = await server?.stop();
      assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
    }
  });

  test('per request: structured_outputs.disable_any_whitespace, lossless under speculation', async () => {
    const body = {
      model: MODEL_ID(), messages: user('Describe read_lines as JSON.'), max_tokens: 300, temperature: 0,
      response_format: format, structured_outputs: { disable_any_whitespace: true },
    };
    const { mtp, text } = await threeWays(clients.flexible, body);
    assertValid(JSON.parse(text), 'disable_any_whitespace');
    assert.ok(isOneLine(text), text);
    // Keys and separators are forced strings: drafted for free, all accepted where reached.
    const spec = mtp.timings.speculative;
    assert.ok(spec.forced > 0, JSON.stringify(spec));
    assert.equal(spec.by_source.grammar.accepted, spec.by_source.grammar.drafted, JSON.stringify(spec));
  });

  test('structured_outputs.json (vLLM) with disable_any_whitespace', async () => {
    const r = await clients.flexible.chat.completions.create({
      model: MODEL_ID(), messages: user('A symbol:'), max_tokens: 300, temperature: 0,
      structured_outputs: { json: schema, disable_any_whitespace: true },
    });
    assert.equal(r.choices[0].finish_reason, 'stop');
    const text = r.choices[0].message.content;
    assertValid(JSON.parse(text), 'structured_outputs.json');
    assert.ok(isOneLine(text), text);
  });

  test('server flag: --json-one-line, and a request that turns it off', async () => {
    const body = { model: MODEL_ID(), messages: user('Describe read_lines as JSON.'), max_tokens: 300, temperature: 0, response_format: format };
    const { text } = await threeWays(clients.oneLine, body);
    assertValid(JSON.parse(text), '--json-one-line');
    assert.ok(isOneLine(text), text);
    // The same request on the default server with the per-request field writes the same bytes.
    const same = await clients.flexible.chat.completions.create({ ...body, structured_outputs: { disable_any_whitespace: true } });
    assert.equal(same.choices[0].message.content, text);
    // Turned off for one request: the default grammar, as on the default server.
    const off = await clients.oneLine.chat.completions.create({ ...body, structured_outputs: { disable_any_whitespace: false } });
    const flex = await clients.flexible.chat.completions.create(body);
    assert.equal(off.choices[0].message.content, flex.choices[0].message.content);
    assertValid(JSON.parse(off.choices[0].message.content), 'disable_any_whitespace: false');
    // llama-server's json_schema field on /v1/completions follows the server flag too.
    const raw = await (await fetch(`${oneLine.base}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x = ', max_tokens: 200, temperature: 0, json_schema: schema }),
    })).json();
    assertValid(JSON.parse(raw.choices[0].text), 'json_schema field');
    assert.ok(isOneLine(raw.choices[0].text), raw.choices[0].text);
  });

  test('what tandem does not implement of structured_outputs is a 400 naming it', async () => {
    for (const [member, value] of [['regex', 'a+'], ['choice', ['a', 'b']], ['structural_tag', '{}'], ['whitespace_pattern', ' ?']]) {
      await assert.rejects(
        clients.flexible.chat.completions.create({
          model: MODEL_ID(), messages: user('x'), max_tokens: 5, structured_outputs: { [member]: value },
        }),
        (e) => e.status === 400 && new RegExp(`structured_outputs\\.${member}: not supported`).test(e.message),
      );
    }
    await assert.rejects(
      clients.flexible.chat.completions.create({
        model: MODEL_ID(), messages: user('x'), max_tokens: 5, response_format: format, structured_outputs: { json: schema },
      }),
      (e) => e.status === 400 && /both constrain/.test(e.message),
    );
  });
});
