// Bounded load test from a separate process: 264 requests over 66 keep-alive connections mixing
// valid chat / completion / message requests (whole and streamed), malformed and mistyped JSON,
// oversized bodies, unknown routes and models, clients that disconnect mid-stream and clients
// that send their body slowly. Every valid request must return exactly what it returns alone
// (greedy), every invalid one its status; /health, probed all along on fresh connections, answers
// within 100 ms (asserted: 500 ms, see HEALTH_BOUND_MS); afterwards the server is healthy, idle, and its memory is back near its baseline.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Worker } from 'node:worker_threads';
import { MODEL_ID, metric, residentBytes, skipReason, startServer, waitFor } from './server_harness.mjs';
import { disconnectAfterFirstChunk, openAiStreamContent, readResponse, request } from './server_http.mjs';

const KINDS = 11;
const REQUESTS = 264;
const CONNECTIONS = 66;
// The target is 100 ms (the worst probe is printed). The assertion allows 500 ms: on a 2-core
// machine shared with other test processes, scheduling alone can cost that; a probe held behind
// generation, the failure this guards, waits seconds.
const HEALTH_BOUND_MS = 500;
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
    const kind = j % KINDS;
    const p = Math.floor(j / KINDS) % PROMPTS.length;
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
        return Math.floor(j / KINDS) % 2 < 1
          ? expect(await request(base, '/v1/nothing-here', { body: {}, agent }), 404)
          : expect(await request(base, '/v1/chat/completions', { body: chatBody(p, { model: 'nope' }), agent }), 404);
      case 9: {
        const r = await request(base, '/v1/messages', {
          body: { model: MODEL_ID(), max_tokens: 8, temperature: 0,
                  messages: [{ role: 'user', content: PROMPTS[p] }] }, agent });
        const text = (r.json?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('');
        return expect(r, 200) ?? (text === reference.chat[p] ? null : `job ${j}: message text differs`);
      }
      case 10: {
        const r = await slowRequest(base, '/v1/chat/completions', chatBody(p));
        const content = r.json?.choices?.[0]?.message?.content ?? '';
        return expect(r, 200) ?? (content === reference.chat[p] ? null : `job ${j}: slow client's content differs`);
      }
    }
    return `job ${j}: no such kind`;
  }

  // A client that sends its body in three parts 150 ms apart (on its own connection).
  function slowRequest(base, path, body) {
    const payload = JSON.stringify(body);
    const third = Math.ceil(payload.length / 3);
    return new Promise((resolve, reject) => {
      const req = http.request(new URL(path, base), {
        method: 'POST', agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      }, (res) => readResponse(res).then(resolve, reject));
      req.on('error', reject);
      req.setTimeout(30000, () => req.destroy(new Error('slow client timed out')));
      (async () => {
        for (let k = 0; k < 3; k++) {
          req.write(payload.slice(k * third, (k + 1) * third));
          await new Promise((r) => setTimeout(r, 150));
        }
        req.end();
      })();
    });
  }

  // Probes /health from a worker thread (health_probe_worker.mjs) until the returned stop() is
  // called; stop() resolves the latencies. A status other than 200 rejects.
  function probeHealth() {
    const worker = new Worker(new URL('./health_probe_worker.mjs', import.meta.url),
      { workerData: { base: server.base } });
    const result = new Promise((resolve, reject) => {
      worker.once('message', (m) => {
        worker.terminate();
        if (m.error) reject(new Error(`/health probe: ${m.error}`));
        else resolve(m.latencies);
      });
      worker.once('error', reject);
    });
    return () => {
      worker.postMessage('stop');
      return result;
    };
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

    const stopProbe = probeHealth();
    const failures = await runMix(REQUESTS);
    const latencies = await stopProbe();
    assert.deepEqual(failures, []);
    const worst = Math.max(...latencies);
    console.log(`/health: ${latencies.length} probes under load, worst ${worst.toFixed(1)} ms`);
    assert.ok(latencies.length >= 5, 'the health probe ran during the load');
    assert.ok(worst < HEALTH_BOUND_MS, `/health took ${worst.toFixed(1)} ms under load`);

    const idle = await waitFor(async () =>
      (await metric(server.base, 'busy_slots')) === 0 && (await metric(server.base, 'queue_depth')) === 0);
    assert.ok(idle, 'the engine is idle after the load');
    assert.equal((await request(server.base, '/health', { method: 'GET' })).status, 200);
    const cancelled = await metric(server.base, 'engine_requests_total', 'outcome="cancelled"');
    assert.ok(cancelled - cancelledBefore >= Math.floor(REQUESTS / KINDS) / 2,
      `disconnected streams were cancelled (${cancelled - cancelledBefore})`);
    assert.ok((await metric(server.base, 'requests_total', 'status="413"')) >= Math.floor(REQUESTS / KINDS));

    const settled = await waitFor(() => residentBytes(server.proc.pid) < baseline + 32 * 2 ** 20, 10000, 200);
    const rss = residentBytes(server.proc.pid);
    console.log(`rss baseline ${(baseline / 2 ** 20).toFixed(1)} MiB, after ${(rss / 2 ** 20).toFixed(1)} MiB`);
    assert.ok(settled, `RSS ${rss} stays within 32 MiB of the baseline ${baseline}`);
  });
});
