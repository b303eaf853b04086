// `tandem serve` facing the internet: hostile and oversized JSON, fields it does not implement,
// slow and vanishing clients, too many connections, browsers (CORS, DNS rebinding), request ids
// and the access log, and shutdown. Each case runs against a real server on loopback.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { MODEL_ID, metric, skipReason, startServer, waitFor } from './server_harness.mjs';
import { request } from './server_http.mjs';

const chat = (extra = {}) => ({
  model: MODEL_ID(), messages: [{ role: 'user', content: 'Say something' }], max_tokens: 8,
  temperature: 0, ...extra,
});

// {"a":{"a":...1...}} nested `depth` levels.
const deep = (depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

// Opens a raw socket, writes `text`, resolves the socket once connected.
function rawSocket(port, text) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => {
      if (text) s.write(text);
      resolve(s);
    });
    s.on('error', reject);
  });
}

// Everything the server sends on `socket` until it closes.
function readAll(socket) {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (c) => { text += c.toString(); });
    socket.on('close', () => resolve(text));
    socket.on('error', () => {});
  });
}

describe('hostile input', { skip: skipReason() ?? false, timeout: 170000 }, () => {
  let server;
  before(async () => {
    // 8,192 positions a slot: the disconnect test's request must outlast the client.
    server = await startServer(['--parallel', '2', '-c', '8192', '--cors-origin',
                                'http://app.example', '--header-timeout', '2']);
  });
  after(async () => {
    assert.equal((await server?.stop())?.code, 0);
  });

  test('a 200,000-deep tools schema gets 400 naming the path, and the server lives', async () => {
    const body = `{"model":"${MODEL_ID()}","messages":[{"role":"user","content":"x"}],` +
      `"tools":[{"type":"function","function":{"name":"f","parameters":${deep(200000)}}}]}`;
    const r = await request(server.base, '/v1/chat/completions', { body });
    assert.equal(r.status, 400, r.text.slice(0, 300));
    assert.match(r.json.error.message, /tools\[0\]\.function\.parameters(\.a)+: nesting deeper than 64/);
    const anthropic = `{"model":"${MODEL_ID()}","max_tokens":4,"messages":[{"role":"user","content":"x"}],` +
      `"tools":[{"name":"f","input_schema":${deep(200000)}}]}`;
    const a = await request(server.base, '/v1/messages', { body: anthropic });
    assert.equal(a.status, 400);
    assert.equal(a.json.type, 'error');
    assert.match(a.json.error.message, /tools\[0\]\.input_schema/);
    // Nesting hidden inside a string: tool-call arguments are JSON text.
    const args = JSON.stringify(deep(100000));
    const hidden = `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":` +
      `[{"id":"c","type":"function","function":{"name":"f","arguments":${args}}}]},` +
      `{"role":"tool","tool_call_id":"c","content":"ok"}]}`;
    const h = await request(server.base, '/v1/chat/completions', { body: hidden });
    assert.equal(h.status, 400);
    assert.match(h.json.error.message, /messages\[1\]\.tool_calls\[0\]\.function\.arguments/);
    assert.equal((await request(server.base, '/health', { method: 'GET' })).status, 200);
    // 64 levels are fine.
    const ok = await request(server.base, '/v1/chat/completions', {
      body: `{"messages":[{"role":"user","content":"x"}],"max_tokens":2,"tools":[{"type":"function",` +
        `"function":{"name":"f","parameters":${deep(60)}}}]}` });
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
  });

  test('too many messages or tools, and huge strings, each get a clear 400', async () => {
    const many = Array.from({ length: 5000 }, () => ({ role: 'user', content: 'x' }));
    let r = await request(server.base, '/v1/chat/completions', { body: { messages: many } });
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /^messages: 5000 elements; the limit is 4096/);
    const tools = Array.from({ length: 600 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
    r = await request(server.base, '/v1/chat/completions', { body: chat({ tools }) });
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /^tools: 600 elements/);
    r = await request(server.base, '/v1/chat/completions',
      { body: chat({ messages: [{ role: 'user', content: 'x'.repeat(5 << 20) }] }) });
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /messages\[0\]\.content: a string of 5242880 bytes/);
  });

  test('fields tandem does not implement are refused by name; the ones it does work', async () => {
    for (const [field, value] of [['mirostat', 2], ['typical_p', 0.5], ['dry_multiplier', 0.8],
      ['xtc_probability', 0.5], ['n_keep', 10], ['id_slot', 1],
      ['top_logprobs', 2], ['seed', 1.5], ['grammar', 42], ['grammar', 'root ::= a'],
      ['json_schema', 'x'], ['json_schema', { type: 'tuple' }]]) {
      const r = await request(server.base, '/v1/chat/completions', { body: chat({ [field]: value }) });
      assert.equal(r.status, 400, `${field}: ${r.text}`);
      assert.match(r.json.error.message, new RegExp(`^${field}`), field);
    }
    // Their no-op values pass.
    const neutral = await request(server.base, '/v1/chat/completions',
      { body: chat({ mirostat: 0, typical_p: 1, id_slot: -1, cache_prompt: false, grammar: '' }) });
    assert.equal(neutral.status, 200, neutral.text);
    // grammar is implemented (tests/node/server_structured.test.mjs covers it).
    const constrained = await request(server.base, '/v1/chat/completions',
      { body: chat({ grammar: 'root ::= "yes" | "no"', max_tokens: 8 }) });
    assert.equal(constrained.status, 200, constrained.text);
    assert.match(constrained.json.choices[0].message.content, /^(yes|no)$/);
    // n_predict (llama-server's max_tokens) and ignore_eos: exactly n tokens.
    for (const path of ['/v1/chat/completions', '/v1/completions']) {
      const body = path === '/v1/completions'
        ? { prompt: 'Once', n_predict: 5, ignore_eos: true, temperature: 0 }
        : chat({ max_tokens: undefined, n_predict: 5, ignore_eos: true });
      const r = await request(server.base, path, { body });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.usage.completion_tokens, 5, path);
      assert.equal(r.json.choices[0].finish_reason, 'length');
    }
  });

  test('X-Request-Id comes back (given or made) and each request gets an access log line', async () => {
    const given = await request(server.base, '/v1/models', { method: 'GET', headers: { 'x-request-id': 'trace-42' } });
    assert.equal(given.headers['x-request-id'], 'trace-42');
    const made = await request(server.base, '/v1/models', { method: 'GET' });
    assert.match(made.headers['x-request-id'], /^req-/);
    assert.ok(await waitFor(() => server.stderr().includes('access id=trace-42 GET /v1/models status=200')));
    const r = await request(server.base, '/v1/chat/completions', { body: chat(), headers: { 'x-request-id': 'gen-1' } });
    assert.equal(r.status, 200);
    assert.ok(await waitFor(() => new RegExp(`access id=gen-1 POST /v1/chat/completions status=200 tokens=${r.json.usage.completion_tokens} ms=`).test(server.stderr())));
  });

  test('CORS is answered for the configured origin only', async () => {
    const pre = await request(server.base, '/v1/chat/completions', { method: 'OPTIONS', headers: {
      origin: 'http://app.example', 'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, authorization' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'http://app.example');
    assert.match(pre.headers['access-control-allow-methods'], /POST/);
    assert.equal(pre.headers['access-control-allow-headers'], 'content-type, authorization');
    const get = await request(server.base, '/v1/models', { method: 'GET', headers: { origin: 'http://app.example' } });
    assert.equal(get.headers['access-control-allow-origin'], 'http://app.example');
    const other = await request(server.base, '/v1/models', { method: 'GET', headers: { origin: 'http://evil.example' } });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
  });

  test('a Host header naming another site is refused (DNS rebinding)', async () => {
    const evil = await request(server.base, '/v1/models', { method: 'GET', headers: { host: 'evil.example:8080' } });
    assert.equal(evil.status, 403);
    assert.match(evil.json.error.message, /Host 'evil.example:8080'/);
    for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, '[::1]']) {
      const ok = await request(server.base, '/v1/models', { method: 'GET', headers: { host } });
      assert.equal(ok.status, 200, host);
    }
  });

  test('clients sending partial headers are cut off and do not block others', async () => {
    const slow = await Promise.all(Array.from({ length: 40 }, () =>
      rawSocket(server.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n')));
    const answers = slow.map(readAll);
    const r = await request(server.base, '/v1/chat/completions', { body: chat() });
    assert.equal(r.status, 200);
    for (const text of await Promise.all(answers)) assert.match(text, /^HTTP\/1\.1 408 /);
  });

  test('malformed HTTP gets 400, a chunked body is read', async () => {
    const bad = await rawSocket(server.port, 'GARBAGE\r\n\r\n');
    assert.match(await readAll(bad), /^HTTP\/1\.1 400 /);
    // An empty or non-token method (found by fuzz_http_wire) is a malformed request line.
    for (const line of [' /health HTTP/1.1', 'GE(T /health HTTP/1.1']) {
      const s = await rawSocket(server.port, `${line}\r\nHost: 127.0.0.1\r\n\r\n`);
      assert.match(await readAll(s), /^HTTP\/1\.1 400 [\s\S]*malformed request line/, line);
    }
    const body = JSON.stringify(chat());
    const chunked = await rawSocket(server.port,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' +
      'Transfer-Encoding: chunked\r\n\r\n' + `${(10).toString(16)}\r\n${body.slice(0, 10)}\r\n` +
      `${(body.length - 10).toString(16)}\r\n${body.slice(10)}\r\n0\r\n\r\n`);
    assert.match(await readAll(chunked), /^HTTP\/1\.1 200 [\s\S]*"chat\.completion"/);
  });

  test('a non-streaming client that disconnects is cancelled and frees its slot', async () => {
    const cancelled = () => metric(server.base, 'engine_requests_total', 'outcome="cancelled"');
    const before = await cancelled();
    const body = JSON.stringify(chat({ max_tokens: 100000, ignore_eos: true }));
    const s = await rawSocket(server.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    assert.ok(await waitFor(async () => (await metric(server.base, 'busy_slots')) >= 1));
    s.destroy();
    assert.ok(await waitFor(async () => (await cancelled()) === before + 1), 'the request was cancelled');
    assert.ok(await waitFor(async () => (await metric(server.base, 'busy_slots')) === 0));
  });
});

describe('admission and shutdown', { skip: skipReason() ?? false, timeout: 170000 }, () => {
  test('connections beyond --max-connections get 503 with Retry-After', async () => {
    const server = await startServer(['--max-connections', '3']);
    try {
      // Idle connections (the harness's own keep-alive one may count too): one is refused.
      const idle = [];
      const answers = [];
      for (let i = 0; i < 4; i++) {
        const s = await rawSocket(server.port, '');
        idle.push(s);
        answers.push(readAll(s));
      }
      const refused = await Promise.race(answers);
      assert.match(refused, /^HTTP\/1\.1 503 [\s\S]*Retry-After: 1/);
      for (const s of idle) s.destroy();
      assert.ok(await waitFor(async () => {
        try { return (await request(server.base, '/health', { method: 'GET' })).status === 200; } catch { return false; }
      }));
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  test('the queue fills at default settings: 503 with Retry-After, not a hang', async () => {
    const server = await startServer([]);
    const controllers = [];
    try {
      // 4 slots + 64 queued; the other 12 are refused at once.
      const busy = [];
      for (let i = 0; i < 80; i++) {
        const c = new AbortController();
        controllers.push(c);
        fetch(`${server.base}/v1/chat/completions`, { method: 'POST', signal: c.signal,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(chat({ max_tokens: 100000, ignore_eos: true })) })
          .then(async (r) => {
            if (r.status === 503) busy.push({ retry: r.headers.get('retry-after'), body: await r.text() });
          })
          .catch(() => {});
      }
      assert.ok(await waitFor(async () => busy.length === 12 &&
        (await metric(server.base, 'queue_depth')) === 64, 60000), `503s: ${busy.length}`);
      for (const r of busy) {
        assert.equal(r.retry, '1');
        assert.match(r.body, /queue full/);
      }
    } finally {
      for (const c of controllers) c.abort();
      assert.equal((await server.stop()).code, 0);
    }
  });

  test('SIGTERM: queued requests get 503, the running one its answer; a second signal exits at once', async () => {
    // No speculation here: prompt lookup on the pair's repetitive text ends a request of
    // hundreds of tokens before a poll sees it running, or before the second signal below.
    // 6000 tokens take seconds even on a fast host (600 once ended before the SIGTERM below).
    const server = await startServer(['--parallel', '1', '--shutdown-timeout', '30', '--spec-type', 'none',
                                      '-c', '8192']);
    const send = (n) => request(server.base, '/v1/chat/completions',
      { body: chat({ max_tokens: n, ignore_eos: true }), agent: false });
    const running = send(6000);
    assert.ok(await waitFor(async () => (await metric(server.base, 'busy_slots')) === 1));
    const queued = [send(5), send(5), send(5)];
    assert.ok(await waitFor(async () => (await metric(server.base, 'queue_depth')) === 3));
    server.proc.kill('SIGTERM');
    for (const r of await Promise.all(queued)) {
      assert.equal(r.status, 503, r.text);
      assert.ok(Number(r.headers['retry-after']) >= 1);
    }
    const first = await running;
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.usage.completion_tokens, 6000);
    assert.equal((await server.exited).code, 0);

    // 32k positions: the request is still running when the second signal comes.
    const again = await startServer(['--parallel', '1', '--shutdown-timeout', '60', '--spec-type', 'none',
                                     '-c', '32768']);
    const stuck = request(again.base, '/v1/chat/completions',
      { body: chat({ max_tokens: 100000, ignore_eos: true }), agent: false }).catch(() => null);
    assert.ok(await waitFor(async () => (await metric(again.base, 'busy_slots')) === 1));
    again.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    again.proc.kill('SIGTERM');
    const status = await again.exited;
    assert.equal(status.code, 128 + 15);
    await stuck;
  });
});
