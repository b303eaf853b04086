// Server behaviour around capacity and lifetime: a full queue answers 503 with Retry-After, a
// client that disconnects frees its slot, and SIGTERM ends in-flight streams cleanly and exits 0.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODEL_ID, metric, skipReason, startServer, waitFor } from './server_harness.mjs';
import { disconnectAfterFirstChunk, request } from './server_http.mjs';

const longChat = (extra = {}) => ({
  model: MODEL_ID(), messages: [{ role: 'user', content: 'Talk for a long time' }],
  max_tokens: 900, temperature: 0.8, seed: 3, ...extra,
});

describe('lifecycle', { skip: skipReason() ?? false, timeout: 170000 }, () => {
  test('a full queue answers 503 with Retry-After; the rest complete', async () => {
    const server = await startServer(['--parallel', '1', '--max-queue', '1']);
    try {
      const results = await Promise.all(Array.from({ length: 6 }, () =>
        request(server.base, '/v1/chat/completions', { body: longChat(), agent: false })));
      const busy = results.filter((r) => r.status === 503);
      const ok = results.filter((r) => r.status === 200);
      assert.ok(busy.length >= 1, `statuses: ${results.map((r) => r.status)}`);
      assert.equal(ok.length + busy.length, results.length);
      for (const r of busy) {
        assert.ok(Number(r.headers['retry-after']) >= 1);
        assert.equal(r.json.error.type, 'unavailable_error');
      }
      const anthropic = await Promise.all(Array.from({ length: 4 }, () =>
        request(server.base, '/v1/messages', { body: longChat({ max_tokens: 900 }), agent: false })));
      for (const r of anthropic.filter((x) => x.status === 503)) {
        assert.equal(r.json.error.type, 'overloaded_error');
      }
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  test('a client that disconnects mid-stream frees its slot', async () => {
    // A generation long enough (no end of turn, 8,000 tokens) that it cannot finish before the
    // server sees the client go, however slowly this client runs.
    const server = await startServer(['--parallel', '1', '-c', '8192']);
    try {
      const cancelled = () => metric(server.base, 'engine_requests_total', 'outcome="cancelled"');
      assert.equal(await cancelled(), 0);
      const status = await disconnectAfterFirstChunk(server.base, '/v1/chat/completions',
        longChat({ stream: true, ignore_eos: true, max_tokens: 8000 }));
      assert.equal(status, 200);
      if (!(await waitFor(async () => (await cancelled()) === 1))) {
        const text = await (await fetch(`${server.base}/metrics`)).text();
        const lines = text.split('\n').filter((l) => /^tandem_(engine_requests|generated_tokens)/.test(l));
        assert.fail(`the request was not cancelled: ${lines.join('; ')}`);
      }
      assert.ok(await waitFor(async () => (await metric(server.base, 'busy_slots')) === 0));
      const next = await request(server.base, '/v1/chat/completions', { body: longChat({ max_tokens: 4 }) });
      assert.equal(next.status, 200);
      const generated = await metric(server.base, 'generated_tokens_total');
      assert.ok(generated < 8000, `the cancelled stream stopped early (${generated} tokens)`);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  test('SIGTERM ends in-flight streams cleanly and exits 0', async () => {
    const server = await startServer(['--parallel', '2', '--shutdown-timeout', '1']);
    const response = await fetch(`${server.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(longChat({ stream: true, max_tokens: 1000, speculative: { enabled: false } })),
    });
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    server.proc.kill('SIGTERM');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    assert.ok(text.endsWith('data: [DONE]\n\n'), `stream ends cleanly: ${text.slice(-120)}`);
    const status = await server.exited;  // a second SIGTERM (stop()) would exit at once
    assert.equal(status.code, 0);
    assert.match(server.stderr(), /shutting down/);
  });
});
