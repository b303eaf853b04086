// Bounded load test from a separate process: 200 requests over 20 keep-alive connections mixing
// valid chat / completion / message requests (whole and streamed), malformed and mistyped JSON,
// oversized bodies, unknown routes and models, and clients that disconnect mid-stream. Every
// valid request must return exactly what it returns alone (greedy), every invalid one its
// status; afterwards the server is healthy, idle, and its memory is back near its baseline.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { MODEL_ID, metric, residentBytes, skipReason, startServer, waitFor } from './server_harness.mjs';
import { disconnectAfterFirstChunk, openAiStreamContent, request } from './server_http.mjs';

const REQUESTS = 200;
const CONNECTIONS = 20;
const BODY_LIMIT = 65536;
const PROMPTS = ['Tell me a story', 'What is two plus two?', 'List three colors', 'Say hello'];

describe('load', { skip: skipReason() ?? false, timeout: 170000 }, () => {
  let server;
  const reference = { chat: [], text: [] };

  const chatBody = (i, extra = {}) => ({
    model: MODEL_ID(), messages: [{ role: 'user', content: PROMPTS[i % PROMPTS.length] }],
    max_tokens: 8, temperature: 0, ...extra,
  });
  const textBody = (i) => ({ prompt: PROMPTS[i % PROMPTS.length], max_tokens: 8, temperature: 0 });

  before(async () => {
    server = await startServer(['--parallel', '4', '--body-limit', String(BODY_LIMIT),
                                '--max-queue', '256']);
    for (let i = 0; i < PROMPTS.length; i++) {
      const chat = await request(server.base, '/v1/chat/completions', { body: chatBody(i) });
      assert.equal(chat.status, 200, chat.text);
      reference.chat.push(chat.json.choices[0].message.content ?? '');
      const text = await request(server.base, '/v1/completions', { body: textBody(i) });
      assert.equal(text.status, 200, text.text);
      reference.text.push(text.json.choices[0].text);
    }
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  // One job: sends request `j` of the mix on `agent` and returns an error string or null.
  async function job(j, agent) {
    const base = server.base;
    const kind = j % 10;
    const p = Math.floor(j / 10) % PROMPTS.length;
    const expect = (r, status) => (r.status === status ? null : `job ${j}: status ${r.status}, wanted ${status}: ${r.text.slice(0, 200)}`);
    switch (kind) {
      case 0:
      case 3: {
        const r = await request(base, '/v1/chat/completions', { body: chatBody(p), agent });
        const content = r.json?.choices?.[0]?.message?.content ?? '';
        return expect(r, 200) ?? (content === reference.chat[p] ? null : `job ${j}: chat content differs`);
      }
      case 1: {
        const r = await request(base, '/v1/completions', { body: textBody(p), agent });
        return expect(r, 200) ?? (r.json.choices[0].text === reference.text[p] ? null : `job ${j}: text differs`);
      }
      case 2: {
        const r = await request(base, '/v1/chat/completions', { body: chatBody(p, { stream: true }), agent });
        if (r.status !== 200) return expect(r, 200);
        return openAiStreamContent(r.text) === reference.chat[p] ? null : `job ${j}: streamed content differs`;
      }
      case 4:
        return expect(await request(base, '/v1/chat/completions', { body: '{"messages": [', agent }), 400);
      case 5:
        return expect(await request(base, '/v1/chat/completions',
          { body: { messages: [{ role: 'user', content: 'x' }], max_tokens: 'many' }, agent }), 400);
      case 6:
        return expect(await request(base, '/v1/chat/completions',
          { body: chatBody(p, { padding: 'x'.repeat(BODY_LIMIT + 1000) }), agent: false }), 413);
      case 7: {
        const status = await disconnectAfterFirstChunk(base, '/v1/chat/completions',
          chatBody(p, { stream: true, max_tokens: 600 }));
        return status === 200 ? null : `job ${j}: disconnecting client got ${status}`;
      }
      case 8:
        return (j / 10) % 2 < 1
          ? expect(await request(base, '/v1/nothing-here', { body: {}, agent }), 404)
          : expect(await request(base, '/v1/chat/completions', { body: chatBody(p, { model: 'nope' }), agent }), 404);
      case 9: {
        const r = await request(base, '/v1/messages', {
          body: { model: MODEL_ID(), max_tokens: 8, temperature: 0,
                  messages: [{ role: 'user', content: PROMPTS[p] }] }, agent });
        const text = (r.json?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('');
        return expect(r, 200) ?? (text === reference.chat[p] ? null : `job ${j}: message text differs`);
      }
    }
    return `job ${j}: no such kind`;
  }

  // Runs the whole mix over CONNECTIONS workers, each with its own keep-alive connection.
  async function runMix(total) {
    const failures = [];
    const workers = [];
    for (let w = 0; w < CONNECTIONS; w++) {
      workers.push((async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        for (let j = w; j < total; j += CONNECTIONS) {
          try {
            const error = await job(j, agent);
            if (error) failures.push(error);
          } catch (e) {
            failures.push(`job ${j}: ${e.message}`);
          }
        }
        agent.destroy();
      })());
    }
    await Promise.all(workers);
    return failures;
  }

  test('every request gets its answer and the server returns to baseline', async () => {
    // Warm up (thread stacks, allocator arenas, caches) before measuring the baseline.
    assert.deepEqual(await runMix(40), []);
    assert.ok(await waitFor(async () => (await metric(server.base, 'busy_slots')) === 0));
    const baseline = residentBytes(server.proc.pid);
    const cancelledBefore = await metric(server.base, 'engine_requests_total', 'outcome="cancelled"');

    const failures = await runMix(REQUESTS);
    assert.deepEqual(failures, []);

    const idle = await waitFor(async () =>
      (await metric(server.base, 'busy_slots')) === 0 && (await metric(server.base, 'queue_depth')) === 0);
    assert.ok(idle, 'the engine is idle after the load');
    assert.equal((await request(server.base, '/health', { method: 'GET' })).status, 200);
    const cancelled = await metric(server.base, 'engine_requests_total', 'outcome="cancelled"');
    assert.ok(cancelled - cancelledBefore >= REQUESTS / 10 / 2,
      `disconnected streams were cancelled (${cancelled - cancelledBefore})`);
    assert.ok((await metric(server.base, 'requests_total', 'status="413"')) >= REQUESTS / 10);

    const settled = await waitFor(() => residentBytes(server.proc.pid) < baseline + 32 * 2 ** 20, 10000, 200);
    const rss = residentBytes(server.proc.pid);
    console.log(`rss baseline ${(baseline / 2 ** 20).toFixed(1)} MiB, after ${(rss / 2 ** 20).toFixed(1)} MiB`);
    assert.ok(settled, `RSS ${rss} stays within 32 MiB of the baseline ${baseline}`);
  });
});
