// llama-server's native POST /completion on `tandem serve` (the bundled trained pair), checked
// against llama-server itself: the peer build in ../shared/peer (skipped, saying so, when it is
// absent) serves the same GGUF file, and every field and event it answers with must be in
// tandem's answer with the same JSON type. Constrained requests on this route (json_schema,
// grammar) are validated with ajv, and greedy speculation equals plain decoding.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { peerBin, startPeerServer, usablePeer } from './peer.mjs';
import { env, skipReason, startServer } from './server_harness.mjs';

async function post(base, path, body) {
  const r = await fetch(`${base}${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: r.status, text: await r.text() };
}

// The JSON payloads of a stream's "data: " lines, and whether it ended with OpenAI's [DONE].
function events(text) {
  const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
  return { done: data.includes('[DONE]'), events: data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d)) };
}

const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

// Every key of `peer` (recursively into objects, except the engines' own settings) is in
// `ours` with the same type.
function assertSameShape(ours, peer, where) {
  for (const [key, value] of Object.entries(peer)) {
    assert.ok(key in ours, `${where}: tandem has no "${key}" (llama-server: ${JSON.stringify(value)})`);
    assert.equal(typeOf(ours[key]), typeOf(value), `${where}.${key}: ${JSON.stringify(ours[key])} vs ${JSON.stringify(value)}`);
    if (typeOf(value) === 'object' && key !== 'generation_settings') {
      assertSameShape(ours[key], value, `${where}.${key}`);
    }
  }
}

const prompt = 'import os\n\n\ndef read_lines(path):\n';

describe('native /completion', { skip: skipReason() ?? false }, () => {
  let server;

  before(async () => {
    server = await startServer(['-c', '2048']);
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  test('fields and events as llama-server answers them, same file', async (t) => {
    const { run, why } = usablePeer();
    if (!run) {
      t.skip(`llama-server (${peerBin}) cannot be used, ${why}: the peer comparison does not run`);
      return;
    }
    const peer = await startPeerServer(run, ['-m', env.model, '-t', '1', '-c', '2048']);
    const { base } = peer;
    try {
      const asks = [
        { prompt, n_predict: 12, temperature: 0 },
        { prompt, n_predict: 40, temperature: 0, stop: ['\n'] },
        { prompt, n_predict: 4, temperature: 0, n_probs: 2, return_tokens: true },
      ];
      for (const body of asks) {
        const [ours, theirs] = [await post(server.base, '/completion', body), await post(base, '/completion', body)];
        assert.equal(ours.status, 200, ours.text);
        assert.equal(theirs.status, 200, theirs.text);
        const [o, p] = [JSON.parse(ours.text), JSON.parse(theirs.text)];
        assertSameShape(o, p, JSON.stringify(body));
        assert.equal(o.stop_type, p.stop_type, JSON.stringify(body));
        assert.equal(o.tokens_evaluated, p.tokens_evaluated, 'the same prompt tokens (BOS included)');
        assert.equal(o.prompt, p.prompt);
        if (body.return_tokens) assert.equal(o.tokens.length, o.tokens_predicted);
        if (body.n_probs) assert.equal(o.completion_probabilities.length, o.tokens_predicted);
      }
      const body = { prompt, n_predict: 6, temperature: 0, stream: true };
      const [ours, theirs] = [await post(server.base, '/completion', body), await post(base, '/completion', body)];
      const [o, p] = [events(ours.text), events(theirs.text)];
      assert.equal(o.done, p.done, 'both end the stream the same way');
      assert.ok(o.events.length >= 2 && p.events.length >= 2);
      assertSameShape(o.events[0], p.events[0], 'first event');
      assertSameShape(o.events.at(-1), p.events.at(-1), 'final event');
      for (const e of o.events.slice(0, -1)) assert.equal(e.stop, false);
      assert.equal(o.events.at(-1).stop, true);
    } finally {
      peer.stop();
    }
  });

  test('json_schema and grammar constrain it; greedy speculation equals plain', async () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string', maxLength: 12 }, kind: { enum: ['function', 'class'] }, pure: { type: 'boolean' } },
      required: ['name', 'kind', 'pure'],
      additionalProperties: false,
    };
    const validate = new Ajv({ strict: false }).compile(schema);
    const body = { prompt, n_predict: 200, temperature: 0, json_schema: schema };
    const spec = JSON.parse((await post(server.base, '/completion', body)).text);
    const plain = JSON.parse((await post(server.base, '/completion', { ...body, speculative: { enabled: false } })).text);
    assert.equal(spec.stop_type, 'eos', spec.content);
    assert.ok(validate(JSON.parse(spec.content)), `${spec.content}: ${JSON.stringify(validate.errors)}`);
    assert.equal(spec.content, plain.content);
    assert.equal(plain.timings.speculative.enabled, false);
    assert.ok(spec.timings.speculative.enabled);

    const grammar = 'root ::= ("yes" | "no") " because " [a-z ]{1,20} "."';
    const g = JSON.parse((await post(server.base, '/completion', { prompt, n_predict: 40, temperature: 0.9, seed: 3, grammar })).text);
    assert.match(g.content, /^(yes|no) because [a-z ]{1,20}\.$/);
    assert.equal(g.stop_type, 'eos');

    const bad = await post(server.base, '/completion', { prompt, json_schema: { type: 'object', patternProperties: { x: {} } } });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.text, /patternProperties/);
  });
});
