// Two `tandem serve` replicas behind a real HAProxy (Debian's /usr/sbin/haproxy) on loopback:
// HAProxy health-checks /health and routes by the X-Session-Id header (consistent hashing), so a
// conversation stays on the replica holding its prompt cache. One replica is SIGKILLed under
// load: HAProxy marks it DOWN, only the requests in flight on it fail, everything sent after the
// kill succeeds on the other replica. docs/deploy.md describes the same setup. Skips when
// haproxy is not installed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MODEL_ID, skipReason, startServer, waitFor } from './server_harness.mjs';
import { request } from './server_http.mjs';

const HAPROXY = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy';
const skip = skipReason() ?? (existsSync(HAPROXY) ? false : `${HAPROXY} is not installed`);

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// One command on HAProxy's stats socket; resolves its answer.
function haproxyCommand(socketPath, command) {
  return new Promise((resolve, reject) => {
    const s = net.connect(socketPath, () => s.end(`${command}\n`));
    let text = '';
    s.on('data', (c) => { text += c.toString(); });
    s.on('end', () => resolve(text));
    s.on('error', reject);
  });
}

// {name: status} of the tandem backend's servers ("UP", "DOWN", ...).
async function serverStates(socketPath) {
  const csv = await haproxyCommand(socketPath, 'show stat');
  const states = {};
  for (const line of csv.split('\n')) {
    const cols = line.split(',');
    if (cols[0] === 'tandem' && cols[1] !== 'BACKEND') states[cols[1]] = cols[17];
  }
  return states;
}

describe('haproxy', { skip, timeout: 170000 }, () => {
  let dir, haproxy, base, statsSocket;
  const replicas = {};

  before(async () => {
    [replicas.a, replicas.b] = await Promise.all([
      startServer(['--parallel', '2']), startServer(['--parallel', '2'])]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'tandem-haproxy-'));
    statsSocket = path.join(dir, 'stats.sock');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = `
global
  maxconn 512
  stats socket ${statsSocket} level admin
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 2
  option redispatch
frontend api
  bind 127.0.0.1:${port}
  default_backend tandem
backend tandem
  balance hdr(X-Session-Id)
  hash-type consistent
  option httpchk
  http-check send meth GET uri /health ver HTTP/1.1 hdr Host localhost
  http-check expect status 200
  default-server inter 200ms fall 2 rise 2
  server a 127.0.0.1:${replicas.a.port} check
  server b 127.0.0.1:${replicas.b.port} check
`;
    writeFileSync(path.join(dir, 'haproxy.cfg'), config);
    haproxy = spawn(HAPROXY, ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    haproxy.stderr.on('data', (c) => { log += c.toString(); });
    const up = await waitFor(async () => {
      try {
        const s = await serverStates(statsSocket);
        return s.a === 'UP' && s.b === 'UP';
      } catch { return false; }
    }, 20000, 100);
    assert.ok(up, `haproxy did not see both replicas up:\n${log}`);
  });

  after(async () => {
    haproxy?.kill('SIGTERM');
    for (const r of Object.values(replicas)) await r.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const ask = (session, id, maxTokens = 8) => request(base, '/v1/chat/completions', {
    body: { model: MODEL_ID(), messages: [{ role: 'user', content: `Conversation ${session}` }],
            max_tokens: maxTokens, temperature: 0 },
    headers: { 'x-session-id': session, 'x-request-id': id }, agent: false, timeoutMs: 60000 });

  // Which replica answered request `id` (from the replicas' access logs; a line may reach this
  // process after the response it logs, so wait for it up to 5 s). undefined: no replica logged it.
  const loggedBy = (id) => Object.keys(replicas).find((k) => replicas[k].stderr().includes(`access id=${id} `));
  const servedBy = async (id) => {
    await waitFor(() => loggedBy(id) !== undefined, 5000);
    return loggedBy(id);
  };

  test('a session stays on one replica; SIGKILL of a replica fails only its in-flight requests', async () => {
    const sessions = Array.from({ length: 12 }, (_, i) => `session-${i}`);
    const home = {};
    for (const s of sessions) {
      for (let k = 0; k < 2; k++) {
        const id = `${s}-warm-${k}`;
        const r = await ask(s, id);
        assert.equal(r.status, 200, r.text);
        const by = await servedBy(id);
        assert.ok(by !== undefined, `no replica logged ${id}`);
        home[s] ??= by;
        assert.equal(by, home[s], `${s} moved between replicas`);
      }
    }
    const onA = sessions.filter((s) => home[s] === 'a');
    assert.ok(onA.length > 0 && onA.length < sessions.length, `sessions spread: ${JSON.stringify(home)}`);

    // Load: one worker per session, requests back to back.
    let killedAt = null;
    let stop = false;
    const results = [];
    const workers = sessions.map(async (s) => {
      for (let n = 0; !stop; n++) {
        const started = Date.now();
        const id = `${s}-load-${n}`;
        let status;
        try {
          status = (await ask(s, id, 24)).status;
        } catch {
          status = 0;
        }
        results.push({ s, id, started, status });
      }
    });
    await waitFor(() => results.length >= 24, 60000);
    // The kill counts from the replica's exit: a request sent between the signal and the exit
    // can still reach the dying process (its listen socket accepts until it is closed), so it
    // is in flight there, not "after the kill".
    const exited = new Promise((resolve) => replicas.a.proc.once('exit', resolve));
    const signalledAt = Date.now();
    replicas.a.proc.kill('SIGKILL');
    await exited;
    killedAt = Date.now();
    assert.ok(await waitFor(async () => (await serverStates(statsSocket)).a === 'DOWN', 10000, 50),
      'haproxy marks the killed replica DOWN');
    const afterKill = results.length;
    await waitFor(() => results.length >= afterKill + 24, 60000);
    stop = true;
    await Promise.all(workers);

    const failed = results.filter((r) => r.status !== 200);
    for (const f of failed) {
      assert.ok(f.started < killedAt, `${f.id} started after the kill and failed (${f.status})`);
      assert.equal(home[f.s], 'a', `${f.id} failed but its session lives on b`);
    }
    // When the signal was sent each session had at most one request in flight. Between the
    // signal and the exit being seen here, a session's worker may see its request fail and send
    // the next one to the dying replica, which fails too: those are not counted.
    const inFlightAtSignal = failed.filter((r) => r.started < signalledAt);
    assert.ok(inFlightAtSignal.length <= onA.length,
      `at most one in-flight request per session on a when it was killed: ${inFlightAtSignal.length}`);
    const later = results.filter((r) => r.started > killedAt);
    assert.ok(later.length >= 24);
    assert.ok(later.every((r) => r.status === 200));
    // Sessions of the dead replica now live on b.
    for (const r of later.filter((x) => home[x.s] === 'a')) assert.equal(await servedBy(r.id), 'b');
    console.log(`requests ${results.length}, failed in flight ${failed.length}, after the kill ${later.length}`);
  });
});
