// The chat page (GET /) in a real browser: Debian's Chromium, headless, driven by puppeteer-core
// against `tandem serve` on the bundled trained pair. It chats, checks the speculation panel
// against the server's own counters, turns speculation off, stops, edits and resends, enters an
// API key, attaches images (picked, pasted, dropped; sent as data URLs, checked in an intercepted
// request), and saves screenshots (desktop and phone width) under TANDEM_SCREENSHOT_DIR.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodePng } from './test_png.mjs';
import { startServer, skipReason, metric, env, waitFor } from './server_harness.mjs';
import {
  WAIT, lanAddress, launchBrowser, lastReply, openPage, setField, tearDown, text, waitIdle,
} from './web_page.mjs';

const SHOTS = process.env.TANDEM_SCREENSHOT_DIR || join(tmpdir(), 'tandem-web-ui');
const ASSISTANT_ID = () => env.assistant.split('/').pop();
// Drafting on every round (the adaptive controller mostly decodes plainly on this small pair).
const SERVER_ARGS = ['--no-adaptive', '--draft-max', '4', '--parallel', '1'];

const reason = skipReason();

const number = async (page, selector) => Number(await text(page, selector));

// Types `message`, sends it with Enter, and waits until the reply has finished.
async function chat(page, message) {
  const before = await page.$$eval('.msg.assistant', (els) => els.length);
  await page.focus('#composer-input');
  await page.keyboard.type(message);
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => document.querySelectorAll('.msg.assistant').length > n, WAIT, before);
  await waitIdle(page);
}

// ---- images (test pictures: test_png.mjs) ----------------------------------------------------

// A streamed chat answer as the server sends it: one text delta, then the final chunk.
function sseReply(text) {
  const chunk = (delta, finish, extra = {}) => `data: ${JSON.stringify({
    object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const speculative = {
    enabled: true, draft_max: 4, drafted: 4, accepted: 3, acceptance_rate: 0.75, rounds: 1,
    plain_steps: 1, tokens_per_target_forward: 2.5, draft_rounds: [[4, 3]],
    acceptance_by_position: [1, 1, 1, 0], by_source: { model: { drafted: 4, accepted: 3, acceptance_rate: 0.75 } },
  };
  return chunk({ role: 'assistant', content: text }, null) +
    chunk({}, 'stop', { timings: { predicted_n: 5, predicted_per_second: 25, speculative } }) +
    'data: [DONE]\n\n';
}

// Dispatches on the message box what the browser dispatches when a file is pasted (`kind`
// 'paste') or dropped ('drop', after a 'dragover'). Resolves to whether the page took it (it
// cancelled the event's default).
function giveFile(page, kind, name, bytes, type = 'image/png') {
  return page.evaluate((kind, name, base64, type) => {
    const data = new DataTransfer();
    data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type }));
    const box = document.getElementById('composer-input');
    const init = { bubbles: true, cancelable: true };
    if (kind === 'paste') {
      const e = new ClipboardEvent('paste', { ...init, clipboardData: data });
      box.dispatchEvent(e);
      return e.defaultPrevented;
    }
    const over = new DragEvent('dragover', { ...init, dataTransfer: data });
    box.dispatchEvent(over);
    const drop = new DragEvent('drop', { ...init, dataTransfer: data });
    box.dispatchEvent(drop);
    return over.defaultPrevented && drop.defaultPrevented;
  }, kind, name, bytes.toString('base64'), type);
}

const thumbNames = (page) => page.$$eval('#attachments .thumb img', (els) => els.map((el) => el.alt));

// The bytes of a data URL of `type`.
function dataUrlBytes(url, type = 'image/png') {
  const prefix = `data:${type};base64,`;
  assert.ok(url.startsWith(prefix), `${url.slice(0, 40)}… is a ${type} data URL`);
  return Buffer.from(url.slice(prefix.length), 'base64');
}

describe('the chat page in Chromium', { skip: reason ?? false }, () => {
  let server;
  let browser;
  let profile;
  const problems = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), 'tandem-chromium-'));
    server = await startServer(SERVER_ARGS, { timeoutMs: 120000 });
    browser = await launchBrowser(profile);
  });

  after(() => tearDown(browser, server, profile));

  test('the page is served from the binary with a strict CSP', async () => {
    const r = await fetch(`${server.base}/`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^text\/html/);
    assert.match(r.headers.get('content-security-policy'), /default-src 'none'/);
    assert.match(await r.text(), /<title>tandem chat<\/title>/);
    for (const name of ['app.js', 'api.js', 'attachments.js', 'audio.js', 'composer_media.js', 'recorder.js',
                        'recorder_worklet.js', 'markdown.js', 'spec_panel.js', 'style.css']) {
      const a = await fetch(`${server.base}/web/${name}`);
      assert.equal(a.status, 200, name);
    }
    assert.equal((await fetch(`${server.base}/web/missing.js`)).status, 404);
    const props = await (await fetch(`${server.base}/props`)).json();
    assert.equal(props.assistant, ASSISTANT_ID());
    assert.equal(props.speculative.active, true);
    assert.equal(props.total_slots, 1);
  });

  test('streamed chunks carry live speculation timings that add up to the final ones', async () => {
    const r = await fetch(`${server.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'import os' }], stream: true,
                             max_tokens: 40, temperature: 0 }),
    });
    const events = (await r.text()).split('\n\n').filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)));
    const last = events.findLast((c) => c.choices.length && c.choices[0].finish_reason);
    const live = events.filter((c) => c !== last && c.timings);
    assert.ok(live.length > 0, 'some chunk before the last carries timings');
    let drafted = 0, accepted = 0, rounds = 0;
    for (const c of [...live, last]) {
      for (const [d, a] of c.timings.speculative.draft_rounds) {
        assert.ok(d >= 1 && d <= 4 && a >= 0 && a <= d, `round ${d}, ${a}`);
        drafted += d;
        accepted += a;
        rounds++;
      }
    }
    const s = last.timings.speculative;
    assert.ok(s.drafted > 0);
    assert.deepEqual([drafted, accepted, rounds], [s.drafted, s.accepted, s.rounds]);
    // Live counters only grow.
    for (let i = 1; i < live.length; i++) {
      assert.ok(live[i].timings.speculative.drafted >= live[i - 1].timings.speculative.drafted);
    }
  });

  test('chat streams a reply and the panel shows the server\'s drafting', async () => {
    const page = await openPage(browser, server.base, problems);
    await page.waitForFunction(
      (id) => document.getElementById('state-assistant').textContent === id, WAIT, ASSISTANT_ID());
    assert.equal(await text(page, '#state-slots'), '0 / 1');
    await setField(page, '#s-temperature', 0);
    await setField(page, '#s-max-tokens', 48);  // at most 48 rounds: all shown
    const drafted0 = await metric(server.base, 'spec_drafted_tokens_total');
    const accepted0 = await metric(server.base, 'spec_accepted_tokens_total');

    await chat(page, 'def read_lines(path):');
    assert.equal(await text(page, '#chat-status'), 'Done.');
    assert.ok((await lastReply(page)).trim().length > 0, 'the reply has streamed text');
    const drafted = await number(page, '#m-drafted');
    const accepted = await number(page, '#m-accepted');
    assert.ok(drafted > 0, `drafted ${drafted}`);
    assert.ok(accepted > 0, `accepted ${accepted}`);
    // The panel's counts are the server's: this was the only request since the first scrape.
    assert.equal(drafted, (await metric(server.base, 'spec_drafted_tokens_total')) - drafted0);
    assert.equal(accepted, (await metric(server.base, 'spec_accepted_tokens_total')) - accepted0);
    assert.match(await text(page, '#spec-status'), /MTP speculation on, draft max 4 · done/);
    // Acceptance by source: each accepted draft came from one source.
    const sources = [...(await text(page, '#m-sources')).matchAll(/(\w+) (\d+)\/(\d+) \(\d+%\)/g)];
    assert.ok(sources.length > 0, 'the panel shows acceptance by source');
    assert.equal(sources.reduce((n, m) => n + Number(m[2]), 0), accepted);
    assert.ok(sources.every((m) => Number(m[2]) <= Number(m[3])), 'accepted <= drafted');
    assert.match(await text(page, '#m-probes'), /^\d+$/);
    // One bar pair per round; each drafted at most 4 (--draft-max 4; fewer only near max_tokens)
    // and they add up to the server's count.
    const titles = await page.$$eval('#chart-rounds g title', (ts) => ts.map((t) => t.textContent));
    assert.ok(titles.length > 0, 'the draft-length chart has rounds');
    let sum = 0;
    for (const t of titles) {
      const [, d, a] = t.match(/drafted (\d+), accepted (\d+)$/).map(Number);
      assert.ok(d >= 1 && d <= 4 && a <= d, t);
      sum += d;
    }
    assert.equal(sum, drafted);
    assert.equal((await page.$$('#chart-position rect')).length, 4, 'four draft positions');
    assert.equal(await page.$eval('#spec-warning', (el) => el.hidden), true);
    await page.screenshot({ path: join(SHOTS, 'web_ui_desktop.png'), fullPage: true });

    // Phone width: one column, nothing wider than the screen.
    await page.setViewport({ width: 390, height: 844 });  // isMobile would reload the page
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a phone screen`);
    await page.screenshot({ path: join(SHOTS, 'web_ui_phone.png'), fullPage: true });
    await page.setViewport({ width: 1280, height: 900 });

    // Speculation off for the next request: the panel and the warning say so, nothing drafted.
    await page.click('#spec-enabled');
    await chat(page, 'class Reader:');
    assert.match(await text(page, '#spec-status'), /Speculation off for this request/);
    assert.equal(await page.$eval('#spec-status', (el) => el.classList.contains('off')), true);
    assert.equal(await text(page, '#m-drafted'), '0');
    assert.equal(await page.$eval('#spec-warning', (el) => el.hidden), false);
    assert.match(await text(page, '#spec-warning'), /speculation was inactive for the last request/);
    assert.match(await text(page, '#spec-compare'), /tok\/s drafting vs [\d.]+ tok\/s plain/);
    await page.screenshot({ path: join(SHOTS, 'web_ui_spec_off.png'), fullPage: true });
    await page.click('#spec-enabled');

    // Edit the first message and resend: the conversation is cut there and answered again.
    await page.click('.msg.user .edit');
    await page.waitForSelector('.msg.user textarea');
    await page.keyboard.down('Shift');  // Shift+Enter: a new line, not send
    await page.keyboard.press('Enter');
    await page.keyboard.up('Shift');
    await page.keyboard.type('    """Read it."""');
    const replies = await page.$$eval('.msg', (els) => els.length);
    assert.equal(replies, 4);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.msg').length === 2, WAIT);
    await waitIdle(page);
    assert.match(await text(page, '.msg.user .msg-body'), /Read it/);

    // Regenerate replaces the last reply; greedy decoding gives the same text again.
    const first = await lastReply(page);
    // The status is cleared first, so the wait below sees this request end however fast it is
    // (a short reply can start and finish between two polls of the send button).
    await page.evaluate(() => { document.getElementById('chat-status').textContent = ''; });
    await page.click('#regenerate-button');
    await waitIdle(page);
    assert.equal(await page.$$eval('.msg', (els) => els.length), 2);
    assert.equal(await lastReply(page), first);

    // Settings reach the request: bad tool JSON is refused in the page, good settings are sent.
    await setField(page, '#tools-json', '[{');
    await page.focus('#composer-input');
    await page.keyboard.type('x = 1');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('tools-error').textContent !== '', WAIT);
    assert.match(await text(page, '#tools-error'), /not valid JSON/);
    assert.equal(await page.$eval('#composer-input', (el) => el.value), 'x = 1', 'the text is kept');
    const tool = { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } };
    await setField(page, '#tools-json', JSON.stringify([tool]));
    await setField(page, '#schema-json', '[1]');
    await page.click('#send-button');
    await page.waitForFunction(() => document.getElementById('schema-error').textContent !== '', WAIT);
    assert.match(await text(page, '#schema-error'), /expected a JSON Schema object/);
    const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['n'], additionalProperties: false };
    await setField(page, '#schema-json', JSON.stringify(schema));
    await setField(page, '#system-prompt', 'You write Python.');
    await page.click('#thinking');
    await setField(page, '#s-top-k', 5);
    await setField(page, '#s-seed', 3);
    await setField(page, '#spec-draft-max', 2);
    let sent = null;
    const onRequest = (r) => { if (r.url().endsWith('/v1/chat/completions')) sent = JSON.parse(r.postData()); };
    page.on('request', onRequest);
    await page.click('#send-button');
    await waitIdle(page);
    page.off('request', onRequest);
    assert.equal(await text(page, '#chat-status'), 'Done.');
    assert.deepEqual(sent.tools, [tool]);
    assert.deepEqual(sent.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema } });
    assert.deepEqual(sent.messages[0], { role: 'system', content: 'You write Python.' });
    assert.deepEqual(sent.chat_template_kwargs, { enable_thinking: true });
    assert.deepEqual(sent.speculative, { enabled: true, draft_max: 2 });
    assert.equal(sent.top_k, 5);
    assert.equal(sent.seed, 3);
    assert.equal(sent.temperature, 0);
    assert.equal(sent.stream, true);
    assert.match(await text(page, '#spec-status'), /draft max 2/);

    // Markdown from the model is rendered, and never as live HTML.
    assert.equal(await page.$$eval('.msg-body script, .msg-body img, .msg-body iframe', (e) => e.length), 0);
    await page.close();
    assert.deepEqual(problems, []);
  });

  test('Stop ends a long reply and the server cancels it', async () => {
    const page = await openPage(browser, server.base, problems);
    await page.waitForFunction(() => document.getElementById('state-assistant').textContent !== '…', WAIT);
    await setField(page, '#s-max-tokens', 900);
    await setField(page, '#s-temperature', 1);
    await setField(page, '#s-seed', 7);
    const cancelled0 = await metric(server.base, 'engine_requests_total', 'outcome="cancelled"');
    await page.focus('#composer-input');
    await page.keyboard.type('import os');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => {
      const b = document.querySelectorAll('.msg.assistant .msg-body');
      return b.length && b[b.length - 1].textContent.length > 0;
    }, WAIT);
    await page.keyboard.press('Escape');
    await waitIdle(page);
    assert.equal(await text(page, '#chat-status'), 'Stopped.');
    assert.match(await text(page, '.msg.assistant .msg-foot'), /stopped/);
    // The aborted fetch closed the stream: the server cancelled the request.
    assert.ok(await waitFor(async () =>
      (await metric(server.base, 'engine_requests_total', 'outcome="cancelled"')) > cancelled0, 60000),
    'the server counted the request as cancelled');
    await page.close();
    assert.deepEqual(problems, []);
  });
  test('images are attached, previewed and sent as data URLs once /props says vision', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-images-'));
    const red = encodePng(64, 48, (x, y) => [255 - 2 * x, 40 + y, 40]);
    const blue = encodePng(40, 60, (x, y) => [30, 2 * x + y, 230]);
    const green = encodePng(32, 32, (x, y) => [40, 180 + ((x ^ y) & 31), 60]);
    const redPath = join(dir, 'red.png');
    const notesPath = join(dir, 'notes.txt');
    const hugePath = join(dir, 'huge.png');
    writeFileSync(redPath, red);
    writeFileSync(notesPath, 'not an image\n');
    const huge = Buffer.alloc(21 * 1024 * 1024);  // a PNG signature, then 21 MB in all
    red.copy(huge, 0, 0, 8);
    writeFileSync(hugePath, huge);
    const status = () => text(page, '#chat-status');

    const page = await openPage(browser, server.base, problems);
    await page.waitForFunction(
      (id) => document.getElementById('state-assistant').textContent === id, WAIT, ASSISTANT_ID());
    // This server has no --mmproj: /props does not say vision, and the control says why it is off.
    const props = await (await fetch(`${server.base}/props`)).json();
    assert.notEqual(props.modalities?.vision, true);
    assert.equal(await page.$eval('#attach-button', (el) => el.disabled), true);
    assert.equal(await page.$eval('#attach-button', (el) => el.title),
                 'start the server with --mmproj to send images');
    await giveFile(page, 'paste', 'red.png', red);
    await page.waitForFunction(
      () => /cannot read images/.test(document.getElementById('chat-status').textContent), WAIT);
    assert.match(await status(), /start the server with --mmproj/);
    assert.deepEqual(await thumbNames(page), []);

    // From here /props says vision is loaded, and chat requests are answered here, not by the model.
    const sent = [];
    await page.setRequestInterception(true);
    page.on('request', async (r) => {
      const path = new URL(r.url()).pathname;
      if (path === '/props') {
        const real = await (await fetch(`${server.base}/props`)).json();
        const body = JSON.stringify({ ...real, modalities: { vision: true, audio: false } });
        await r.respond({ status: 200, contentType: 'application/json', body });
      } else if (path === '/v1/chat/completions' && r.method() === 'POST') {
        sent.push(JSON.parse(r.postData() ?? await r.fetchPostData()));
        await r.respond({ status: 200, contentType: 'text/event-stream', body: sseReply('Red and blue.') });
      } else {
        await r.continue();
      }
    });
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => !document.getElementById('attach-button').disabled, WAIT);
    assert.match(await page.$eval('#attach-button', (el) => el.title), /paste or drop/);

    // The button opens a picker for several PNG, JPEG or WebP files.
    assert.equal(await page.$eval('#image-input', (el) => el.accept), 'image/png,image/jpeg,image/webp');
    const [chooser] = await Promise.all([page.waitForFileChooser(WAIT), page.click('#attach-button')]);
    assert.equal(chooser.isMultiple(), true);
    await chooser.accept([redPath]);
    await page.waitForSelector('#attachments .thumb img');
    assert.deepEqual(await thumbNames(page), ['red.png']);
    assert.equal(await status(), '1 image attached.');
    // The thumbnail is the file, decoded by the browser.
    await page.waitForFunction(() => document.querySelector('#attachments img').complete, WAIT);
    assert.deepEqual(await page.$eval('#attachments img', (el) => [el.naturalWidth, el.naturalHeight]), [64, 48]);
    assert.ok(dataUrlBytes(await page.$eval('#attachments img', (el) => el.src)).equals(red));

    // What the server would refuse stays in the page: the status line says why.
    const input = await page.$('#image-input');
    await input.uploadFile(notesPath);
    await page.waitForFunction(() => /notes/.test(document.getElementById('chat-status').textContent), WAIT);
    assert.equal(await status(), 'notes.txt is not a PNG, JPEG or WebP image');
    assert.equal(await page.$eval('#chat-status', (el) => el.classList.contains('error')), true);
    await input.uploadFile(hugePath);
    await page.waitForFunction(() => /huge/.test(document.getElementById('chat-status').textContent), WAIT);
    assert.equal(await status(), 'huge.png is 21 MB; the limit is 20 MB per image');
    // A file named and typed as a PNG is still checked by its bytes.
    assert.equal(await giveFile(page, 'paste', 'fake.png', Buffer.from('GIF89a, honest')), true);
    await page.waitForFunction(() => /fake/.test(document.getElementById('chat-status').textContent), WAIT);
    assert.equal(await status(), 'fake.png is not a PNG, JPEG or WebP image');
    assert.deepEqual(await thumbNames(page), ['red.png']);

    // Pasted into the message box, dropped on it.
    assert.equal(await giveFile(page, 'paste', 'blue.png', blue), true);
    await page.waitForFunction(() => document.querySelectorAll('#attachments .thumb').length === 2, WAIT);
    assert.equal(await giveFile(page, 'drop', 'green.png', green), true);
    await page.waitForFunction(() => document.querySelectorAll('#attachments .thumb').length === 3, WAIT);
    assert.deepEqual(await thumbNames(page), ['red.png', 'blue.png', 'green.png']);
    await page.type('#composer-input', 'What colours are these?');
    await page.screenshot({ path: join(SHOTS, 'web_ui_images_pending.png') });

    // × takes one back.
    await page.click('#attachments .thumb:nth-child(3) .remove');
    assert.deepEqual(await thumbNames(page), ['red.png', 'blue.png']);

    // Sent: the text, then one image_url part per image holding the file's exact bytes.
    await page.focus('#composer-input');
    await page.keyboard.press('Enter');
    await waitIdle(page);
    assert.equal(await status(), 'Done.');
    assert.equal(sent.length, 1);
    const [textPart, ...imageParts] = sent[0].messages.at(-1).content;
    assert.equal(sent[0].messages.at(-1).role, 'user');
    assert.deepEqual(textPart, { type: 'text', text: 'What colours are these?' });
    assert.deepEqual(imageParts.map((p) => p.type), ['image_url', 'image_url']);
    assert.ok(dataUrlBytes(imageParts[0].image_url.url).equals(red), 'the picked file');
    assert.ok(dataUrlBytes(imageParts[1].image_url.url).equals(blue), 'the pasted file');
    // The transcript shows them; the box is empty again.
    assert.deepEqual(await thumbNames(page), []);
    assert.equal(await page.$eval('#attachments', (el) => el.hidden), true);
    assert.deepEqual(await page.$$eval('.msg.user .msg-images img', (els) => els.map((el) => el.alt)),
                     ['red.png', 'blue.png']);
    assert.equal(await lastReply(page), 'Red and blue.');
    await page.screenshot({ path: join(SHOTS, 'web_ui_images_sent.png') });

    // Edit and resend: the images go with the edited text.
    await page.click('.msg.user .edit');
    await page.waitForSelector('.msg.user textarea');
    assert.equal(await page.$$eval('.msg.user .attachments .thumb', (els) => els.length), 2);
    await page.screenshot({ path: join(SHOTS, 'web_ui_images_edit.png') });
    await page.keyboard.type(' Answer briefly.');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.msg').length === 2, WAIT);
    await waitIdle(page);
    assert.equal(sent.length, 2);
    assert.deepEqual(sent[1].messages.length, 1);
    assert.deepEqual(sent[1].messages[0].content,
                     [{ type: 'text', text: 'What colours are these? Answer briefly.' }, ...imageParts]);
    assert.equal(await page.$$eval('.msg.user .msg-images img', (els) => els.length), 2);

    // An image alone is a message (the Send button submits with an empty box).
    await page.evaluate(() => { document.getElementById('chat-status').textContent = ''; });
    await input.uploadFile(redPath);
    await page.waitForSelector('#attachments .thumb');
    await page.click('#send-button');
    await waitIdle(page);
    assert.equal(sent.length, 3);
    assert.deepEqual(sent[2].messages.at(-1), { role: 'user', content: [imageParts[0]] });
    // Earlier turns keep their images.
    assert.deepEqual(sent[2].messages[0], sent[1].messages[0]);

    await page.close();
    rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(problems, []);
  });
});

// Served on every interface (--host 0.0.0.0) and opened through a non-loopback address when the
// machine has one, as a phone on the same network would.
describe('the chat page with --api-key on a non-loopback --host', { skip: reason ?? false }, () => {
  let server;
  let base;
  let browser;
  let profile;
  const problems = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), 'tandem-chromium-'));
    server = await startServer([...SERVER_ARGS, '--host', '0.0.0.0', '--api-key', 'sesame'],
                               { timeoutMs: 120000 });
    const lan = lanAddress();
    base = lan ? `http://${lan}:${server.port}` : server.base;
    console.log(`opening the page at ${base}`);
    browser = await launchBrowser(profile);
  });

  after(() => tearDown(browser, server, profile));

  test('the key is asked for once, checked, kept and used', async () => {
    assert.equal((await fetch(`${server.base}/props`)).status, 401);
    assert.equal((await fetch(`${server.base}/`)).status, 200, 'the page itself needs no key');
    const page = await openPage(browser, base, problems);
    await page.waitForSelector('#key-form:not([hidden])');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'key-input');
    assert.match(await text(page, '#key-message'), /needs an API key/);

    await page.keyboard.type('wrong');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => /refused/.test(document.getElementById('key-message').textContent), WAIT);
    await page.screenshot({ path: join(SHOTS, 'web_ui_api_key.png') });

    await page.type('#key-input', 'sesame');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#key-form', { hidden: true, ...WAIT });
    await page.waitForFunction(
      (id) => document.getElementById('state-assistant').textContent === id, WAIT, ASSISTANT_ID());
    assert.equal(await page.evaluate(() => localStorage.getItem('tandem.apiKey')), 'sesame');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'composer-input');

    await setField(page, '#s-max-tokens', 16);
    await chat(page, 'x = 1');
    assert.equal(await text(page, '#chat-status'), 'Done.');

    // A reload finds the key in storage: no prompt.
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(
      (id) => document.getElementById('state-assistant').textContent === id, WAIT, ASSISTANT_ID());
    assert.equal(await page.$eval('#key-form', (el) => el.hidden), true);
    await page.close();
    assert.deepEqual(problems, []);
  });
});
