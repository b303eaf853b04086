// The speculation panel's "est. speedup" in a real browser (Debian's Chromium, headless, via
// puppeteer-core) against `tandem serve` on the bundled trained pair, drafting every round. A run
// that timed fewer plain steps than the server's minimum has no plain-step baseline: the panel
// must say so (any upper bound only in the tooltip), never a bare figure. Checked on a real reply
// (its counts read from the panel itself) and on the counts of a reply the panel once showed as
// "0.17×" (1 plain step, 137 rounds, 1.86 tokens per forward).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { startServer, skipReason } from './server_harness.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const WAIT = { timeout: 120000 };  // generous: CI machines are shared and slow
const reason = skipReason();

const text = (page, id) => page.$eval(`#${id}`, (el) => el.textContent.trim());

describe('web page: est. speedup', { skip: reason ?? false }, () => {
  let server, browser, page, profile;
  const problems = [];

  before(async () => {
    server = await startServer(['--no-adaptive', '--draft-max', '4', '--parallel', '1']);
    profile = mkdtempSync(join(tmpdir(), 'tandem-speedup-'));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: profile,
      protocolTimeout: 180000,
      timeout: 120000,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    });
    page = await browser.newPage();
    page.setDefaultTimeout(WAIT.timeout);
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await page.goto(`${server.base}/`, { waitUntil: 'load', timeout: WAIT.timeout });
  });

  after(async () => {
    if (browser) await browser.close().catch(() => browser.process()?.kill('SIGKILL'));
    if (server) await server.stop();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  test('a reply that drafted every round shows no bare figure without a baseline', async (t) => {
    await page.focus('#composer-input');
    await page.keyboard.type('def read_lines(path):');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => !document.getElementById('send-button').disabled &&
        /^Done/.test(document.getElementById('chat-status').textContent),
      WAIT);
    const [rounds, plain] = (await text(page, 'm-rounds')).split('·').map((x) => Number(x.trim()));
    const tpf = Number(await text(page, 'm-tpf'));
    const speedup = await text(page, 'm-speedup');
    t.diagnostic(`rounds ${rounds}, plain steps ${plain}, tokens per forward ${tpf}: "${speedup}"`);
    assert.ok(rounds > 0, `the reply drafted (rounds · plain steps: ${rounds} · ${plain})`);
    assert.ok(tpf > 1, `tokens per forward ${tpf}`);
    if (plain < 8) {
      assert.equal(speedup, 'needs a plain-step baseline');
    } else {
      assert.match(speedup, /^\d+\.\d\d×$/);
    }
    assert.deepEqual(problems, []);
  });

  test('one plain step is no baseline: the counts once shown as 0.17×', async () => {
    const shown = await page.evaluate(async () => {
      const { speedupOf } = await import('/web/spec_panel.js');
      const one = { rounds: 137, plain_steps: 1, drafted: 548, accepted: 118,
        tokens_per_target_forward: 1.86, speedup_estimate: 0.17 };
      const enough = { ...one, plain_steps: 8, speedup_estimate: 2.03,
        speedup_estimate_is_upper_bound: false, speedup_baseline_min_plain_steps: 8 };
      const bound = { ...one, speedup_estimate: 2.18, speedup_estimate_is_upper_bound: true,
        speedup_baseline_min_plain_steps: 8 };
      const plainOnly = { rounds: 0, plain_steps: 3, speedup_estimate: 0.98 };
      return [one, enough, bound, plainOnly].map((s) => speedupOf(s).text)
        .concat([speedupOf(bound).title]);
    });
    assert.deepEqual(shown, [
      'needs a plain-step baseline',
      '2.03×',
      'needs a plain-step baseline',
      '0.98×',
      '1 of the 8 plain steps an estimate needs were timed. At most 2.18×, with a verification ' +
        'forward standing in for a plain step.',
    ]);
    assert.deepEqual(problems, []);
  });
});
