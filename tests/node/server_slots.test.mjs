// llama-server's saved slots on `tandem serve`: a conversation's slot saved with
// POST /slots/0?action=save survives a restart (restored by POST .../restore and by
// --slot-restore), the next request reuses the restored prefix (timings.cache_n) and answers
// exactly what the original server answered; bad names, unknown actions, a missing
// --slot-save-path, a slot running a request and unknown body fields are refused with the
// documented statuses.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODEL_ID, skipReason, startServer, waitFor } from './server_harness.mjs';

async function call(base, method, path, body) {
  const r = await fetch(`${base}${path}`, {
    method, headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

const system = 'You are a careful assistant. '.repeat(12);
const chat = (question, extra = {}) => ({
  model: MODEL_ID(), max_tokens: 12, temperature: 0,
  messages: [{ role: 'system', content: system }, { role: 'user', content: question }], ...extra,
});

describe('saved slots', { skip: skipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-slots-'));
  let first;

  before(async () => {
    first = await startServer(['--parallel', '1', '--slot-save-path', dir]);
  });

  after(async () => {
    await first?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('save, restart, restore: the next request reuses the prefix and answers the same', async () => {
    const warm = await call(first.base, 'POST', '/v1/chat/completions', chat('First question?'));
    assert.equal(warm.status, 200);
    const slots = await call(first.base, 'GET', '/slots');
    assert.equal(slots.status, 200);
    assert.equal(slots.json.length, 1);
    assert.equal(slots.json[0].id, 0);
    assert.equal(slots.json[0].is_processing, false);
    assert.ok(slots.json[0].n_ctx > 0);

    const saved = await call(first.base, 'POST', '/slots/0?action=save', { filename: 'sys.bin' });
    assert.equal(saved.status, 200, JSON.stringify(saved.json));
    assert.equal(saved.json.id_slot, 0);
    assert.equal(saved.json.filename, 'sys.bin');
    assert.ok(saved.json.n_saved > 0);
    assert.ok(saved.json.n_written > 0);
    assert.equal(typeof saved.json.timings.save_ms, 'number');

    const question = chat('Second question?');
    const original = await call(first.base, 'POST', '/v1/chat/completions', question);
    assert.equal(original.status, 200);
    const shared = original.json.timings.cache_n;
    assert.ok(shared > 0, 'the system prompt is cached on the first server');
    await first.stop();

    // A new process restores by request.
    const second = await startServer(['--parallel', '1', '--slot-save-path', dir]);
    try {
      const restored = await call(second.base, 'POST', '/slots/0?action=restore', { filename: 'sys.bin' });
      assert.equal(restored.status, 200, JSON.stringify(restored.json));
      assert.equal(restored.json.n_restored, saved.json.n_saved);
      assert.equal(restored.json.n_read, saved.json.n_written);
      assert.equal(typeof restored.json.timings.restore_ms, 'number');
      const again = await call(second.base, 'POST', '/v1/chat/completions', question);
      assert.equal(again.json.timings.cache_n, shared);
      assert.equal(again.json.choices[0].message.content, original.json.choices[0].message.content);

      const erased = await call(second.base, 'POST', '/slots/0?action=erase');
      assert.equal(erased.status, 200);
      assert.equal(erased.json.id_slot, 0);
      assert.ok(erased.json.n_erased > 0);
      assert.equal((await call(second.base, 'GET', '/slots')).json[0].n_cached, 0);
      const cold = await call(second.base, 'POST', '/v1/chat/completions', question);
      assert.equal(cold.json.timings.cache_n, 0);
      assert.equal(cold.json.choices[0].message.content, original.json.choices[0].message.content);
    } finally {
      await second.stop();
    }

    // A replica started with --slot-restore has the prefix in every slot.
    const replica = await startServer(['--parallel', '2', '--slot-restore', join(dir, 'sys.bin')]);
    try {
      const a = await call(replica.base, 'POST', '/v1/chat/completions', question);
      assert.equal(a.json.timings.cache_n, shared);
      assert.equal(a.json.choices[0].message.content, original.json.choices[0].message.content);
      const slots2 = (await call(replica.base, 'GET', '/slots')).json;
      assert.equal(slots2.length, 2);
      // Without --slot-save-path, save and restore are refused with 501; erase works.
      const refused = await call(replica.base, 'POST', '/slots/1?action=save', { filename: 'x.bin' });
      assert.equal(refused.status, 501);
      assert.equal((await call(replica.base, 'POST', '/slots/1?action=erase')).status, 200);
    } finally {
      await replica.stop();
    }
  });

  test('a slot running a request is refused with 409, and works once it is idle', async () => {
    const s = await startServer(['--parallel', '1', '--slot-save-path', dir]);
    const running = new AbortController();
    try {
      assert.equal((await call(s.base, 'POST', '/v1/chat/completions', chat('First question?'))).status, 200);
      const idle = await call(s.base, 'POST', '/slots/0?action=save', { filename: 'busy.bin' });
      assert.equal(idle.status, 200, JSON.stringify(idle.json));
      const long = fetch(`${s.base}/v1/chat/completions`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, signal: running.signal,
        body: JSON.stringify(chat('Go on.', { max_tokens: 100000, ignore_eos: true })),
      }).catch(() => null);
      assert.ok(await waitFor(async () => (await call(s.base, 'GET', '/slots')).json[0].is_processing),
        'the slot runs the request');
      for (const [action, body] of [['save', { filename: 'busy.bin' }],
        ['restore', { filename: 'busy.bin' }], ['erase', undefined]]) {
        const r = await call(s.base, 'POST', `/slots/0?action=${action}`, body);
        assert.equal(r.status, 409, `${action}: ${JSON.stringify(r.json)}`);
        assert.match(r.json.error.message, /slot 0 is processing a request/);
      }
      running.abort();
      await long;
      assert.ok(await waitFor(async () => !(await call(s.base, 'GET', '/slots')).json[0].is_processing),
        'the slot is idle again');
      const restored = await call(s.base, 'POST', '/slots/0?action=restore', { filename: 'busy.bin' });
      assert.equal(restored.status, 200, JSON.stringify(restored.json));
      assert.equal(restored.json.n_restored, idle.json.n_saved);
    } finally {
      running.abort();
      await s.stop();
    }
  });

  test('bad names, actions and slots are refused', async () => {
    const s = await startServer(['--parallel', '1', '--slot-save-path', dir]);
    try {
      for (const filename of ['', '../x.bin', '/etc/passwd', 'a/b.bin', '.hidden', 'a..b', 'x'.repeat(201), 'sp ace.bin', 7]) {
        const r = await call(s.base, 'POST', '/slots/0?action=save', { filename });
        assert.equal(r.status, 400, `filename ${JSON.stringify(filename)}`);
        assert.match(r.json.error.message, /filename/);
      }
      assert.equal((await call(s.base, 'POST', '/slots/0?action=fly', { filename: 'a.bin' })).status, 400);
      assert.equal((await call(s.base, 'POST', '/slots/0', { filename: 'a.bin' })).status, 400);
      assert.equal((await call(s.base, 'POST', '/slots/9?action=save', { filename: 'a.bin' })).status, 400);
      assert.equal((await call(s.base, 'POST', '/slots/x?action=save', { filename: 'a.bin' })).status, 400);
      assert.equal((await call(s.base, 'POST', '/slots/0?action=restore', { filename: 'none.bin' })).status, 404);
      // A body field the action does not read is named, never ignored.
      const extra = await call(s.base, 'POST', '/slots/0?action=save', { filename: 'a.bin', id_slot: 0 });
      assert.equal(extra.status, 400);
      assert.match(extra.json.error.message, /^id_slot: unknown field/);
    } finally {
      await s.stop();
    }
  });
});
