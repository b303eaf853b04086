// Recordings on the chat page (GET /) in headless Chromium against `tandem serve -mm` with the
// tiny target and the mmproj holding the audio tower: WAV files attached (picked and dropped),
// previewed with their length, removed, and sent as OpenAI input_audio parts the server hears (25
// soft tokens a second, plus 2); a mislabelled file's 400 naming the part shown as the page shows
// errors; a recording from Chromium's fake microphone sent as a 16-bit mono WAV; a refused or
// missing microphone and a page that is not a secure context said on the status line; no audio
// controls on a server without the tower. Test recordings: test_wav.mjs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wav } from './test_wav.mjs';
import { MODEL_ID, skipReason, startServer } from './server_harness.mjs';
import {
  WAIT, lanAddress, launchBrowser, openPage, setField, tearDown, text, waitIdle,
} from './web_page.mjs';

const SHOTS = process.env.TANDEM_SCREENSHOT_DIR || join(tmpdir(), 'tandem-web-ui');
const MMPROJ = process.env.TANDEM_MMPROJ;
const reason = skipReason() ?? (MMPROJ ? null : 'TANDEM_MMPROJ is not set (run through ctest)');
// Chromium grants the microphone without asking, and it hears a beeping tone.
const FAKE_MICROPHONE = ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'];

const status = (page) => text(page, '#chat-status');
const clipLabels = (page, list = '#audio-attachments') =>
  page.$$eval(`${list} .clip-label`, (els) => els.map((el) => el.textContent));

// Waits until the pending recordings' labels are `labels` (their lengths are read by the browser).
async function waitForClips(page, labels) {
  await page.waitForFunction((want) => {
    const got = [...document.querySelectorAll('#audio-attachments .clip-label')].map((el) => el.textContent);
    return JSON.stringify(got) === JSON.stringify(want);
  }, WAIT, labels).catch(async (e) => {
    throw new Error(`clips ${JSON.stringify(await clipLabels(page))}, wanted ${JSON.stringify(labels)}: ${e.message}`);
  });
}

// The chat request bodies the page sends, in order (read from the browser's network log).
function recordRequests(page) {
  const sent = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/chat/completions') && r.method() === 'POST') {
      sent.push(Promise.resolve(r.postData() ?? r.fetchPostData()).then(JSON.parse));
    }
  });
  return { all: () => Promise.all(sent) };
}

// Dispatches a drop of file `name` on the message box, as the browser does.
function dropFile(page, name, bytes, type) {
  return page.evaluate((name, base64, type) => {
    const data = new DataTransfer();
    data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type }));
    const box = document.getElementById('composer-input');
    const init = { bubbles: true, cancelable: true };
    box.dispatchEvent(new DragEvent('dragover', { ...init, dataTransfer: data }));
    box.dispatchEvent(new DragEvent('drop', { ...init, dataTransfer: data }));
  }, name, bytes.toString('base64'), type);
}

// The same request without streaming, answered by the server: its prompt_tokens.
async function promptTokens(base, body) {
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...body, stream: false, stream_options: undefined, max_tokens: 1 }),
  });
  const answer = await r.json();
  assert.equal(r.status, 200, JSON.stringify(answer));
  return answer.usage.prompt_tokens;
}

// `body` with every input_audio part taken out of its last message.
function withoutAudio(body) {
  const messages = body.messages.map((m) => m);
  const last = messages.at(-1);
  const kept = last.content.filter((p) => p.type !== 'input_audio');
  messages[messages.length - 1] = { ...last, content: kept.length ? kept : '' };
  return { ...body, messages };
}

// {rate, channels, bits, samples} of a PCM WAV file written by the page.
function readWav(bytes) {
  assert.equal(bytes.toString('latin1', 0, 4), 'RIFF');
  assert.equal(bytes.toString('latin1', 8, 12), 'WAVE');
  assert.equal(bytes.toString('latin1', 36, 40), 'data');
  assert.equal(bytes.readUInt32LE(4), bytes.length - 8);
  assert.equal(bytes.readUInt32LE(40), bytes.length - 44);
  const samples = [];
  for (let at = 44; at < bytes.length; at += 2) samples.push(bytes.readInt16LE(at));
  return {
    format: bytes.readUInt16LE(20), channels: bytes.readUInt16LE(22), rate: bytes.readUInt32LE(24),
    byteRate: bytes.readUInt32LE(28), bits: bytes.readUInt16LE(34), samples,
  };
}

describe('recordings on the chat page', { skip: reason ?? false }, () => {
  let server;
  let browser;
  let profile;
  let dir;
  const tone = wav(1.0);
  const short = wav(0.5, { seed: 4 });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'tandem-audio-'));
    writeFileSync(join(dir, 'tone.wav'), tone);
    writeFileSync(join(dir, 'tone-named.mp3'), tone);
    writeFileSync(join(dir, 'notes.txt'), 'not a recording\n');
    profile = mkdtempSync(join(tmpdir(), 'tandem-chromium-'));
    // Every interface: the page is also opened through a non-loopback address (not secure).
    server = await startServer(['-mm', MMPROJ, '--parallel', '1', '--host', '0.0.0.0'],
                               { timeoutMs: 120000 });
    browser = await launchBrowser(profile, FAKE_MICROPHONE);
  });

  after(async () => {
    await tearDown(browser, server, profile);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // The page with /props read: the audio controls are shown. Its problems go on `problems`.
  async function open(problems, expectedErrors) {
    const { exitCode, signalCode } = server.proc;
    if (exitCode !== null || signalCode !== null) {
      throw new Error(`the server has exited (${exitCode ?? signalCode}):\n${server.stderr().slice(-2000)}`);
    }
    const page = await openPage(browser, server.base, problems, expectedErrors);
    await page.waitForSelector('#audio-button:not([hidden])', WAIT);
    await setField(page, '#s-temperature', 0);
    await setField(page, '#s-max-tokens', 8);
    return page;
  }

  test('WAV files are previewed, removable, and sent as input_audio parts the server hears', async () => {
    const problems = [];
    const page = await open(problems);
    const sent = recordRequests(page);
    const props = await (await fetch(`${server.base}/props`)).json();
    assert.deepEqual(props.modalities, { vision: true, audio: true });
    assert.equal(await page.$eval('#record-button', (el) => el.hidden), false);
    assert.equal(await page.$eval('#record-button', (el) => el.getAttribute('aria-disabled')), 'false');
    assert.equal(await page.$eval('#audio-input', (el) => el.accept), '.wav,.mp3,.flac,.ogg,audio/*');

    // Picked, then dropped on the message box; each shows a player, its name and its length.
    const [chooser] = await Promise.all([page.waitForFileChooser(WAIT), page.click('#audio-button')]);
    assert.equal(chooser.isMultiple(), true);
    await chooser.accept([join(dir, 'tone.wav')]);
    await waitForClips(page, ['tone.wav · 1.0 s']);
    assert.equal(await status(page), '1 recording attached.');
    await dropFile(page, 'short.wav', short, 'audio/wav');
    await waitForClips(page, ['tone.wav · 1.0 s', 'short.wav · 0.5 s']);
    const players = await page.$$eval('#audio-attachments audio', (els) => els.map((el) => [el.controls, el.src]));
    assert.deepEqual(players.map(([controls]) => controls), [true, true]);
    assert.equal(players[0][1], `data:audio/wav;base64,${tone.toString('base64')}`);
    await (await page.$('#composer')).screenshot({ path: join(SHOTS, 'web_audio_pending.png') });
    // Phone width: the players shrink, nothing is wider than the screen.
    await page.setViewport({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a phone screen`);
    await (await page.$('#composer')).screenshot({ path: join(SHOTS, 'web_audio_pending_phone.png') });
    await page.setViewport({ width: 1280, height: 900 });

    // What the server cannot take stays in the page, the status line says why.
    await (await page.$('#audio-input')).uploadFile(join(dir, 'notes.txt'));
    await page.waitForFunction(() => /notes/.test(document.getElementById('chat-status').textContent), WAIT);
    assert.equal(await status(page), 'notes.txt is not a WAV, MP3, FLAC or Ogg file');
    assert.equal(await page.$eval('#chat-status', (el) => el.classList.contains('error')), true);

    // × takes one back.
    await page.click('#audio-attachments .clip-item:nth-child(2) .remove');
    await waitForClips(page, ['tone.wav · 1.0 s']);

    await page.type('#composer-input', 'Transcribe this:');
    await page.keyboard.press('Enter');
    await waitIdle(page);
    assert.equal(await status(page), 'Done.');
    const [body] = await sent.all();
    assert.deepEqual(body.messages.at(-1), {
      role: 'user',
      content: [{ type: 'text', text: 'Transcribe this:' },
        { type: 'input_audio', input_audio: { data: tone.toString('base64'), format: 'wav' } }],
    });
    // The server heard one second: 25 soft tokens between <|audio> and <audio|>.
    assert.equal(await promptTokens(server.base, body),
                 (await promptTokens(server.base, withoutAudio(body))) + 25 + 2);
    // The transcript plays it; the box is empty again; the reply is there.
    assert.deepEqual(await clipLabels(page, '.msg.user'), ['tone.wav · 1.0 s']);
    assert.equal(await page.$eval('#audio-attachments', (el) => el.hidden), true);
    assert.equal(await page.$$eval('.msg.assistant', (els) => els.length), 1);
    assert.equal(await page.$$eval('.msg.assistant.error', (els) => els.length), 0);
    await (await page.$('.chat')).screenshot({ path: join(SHOTS, 'web_audio_sent.png') });

    // Edit and resend: the recording goes with the edited text.
    await page.click('.msg.user .edit');
    await page.waitForSelector('.msg.user textarea');
    assert.deepEqual(await clipLabels(page, '.msg.user .clips'), ['tone.wav · 1.0 s']);
    await page.keyboard.type(' Briefly.');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.msg').length === 2, WAIT);
    await waitIdle(page);
    const [, edited] = await sent.all();
    assert.deepEqual(edited.messages.at(-1).content,
                     [{ type: 'text', text: 'Transcribe this: Briefly.' }, body.messages.at(-1).content[1]]);
    await page.close();
    assert.deepEqual(problems, []);
  });

  test('the server\'s 400 naming the part is shown as the page shows errors', async () => {
    const problems = [];
    const page = await open(problems, /\b400\b/);
    const sent = recordRequests(page);
    // A WAV file named .mp3: the page says mp3, the server finds WAV bytes.
    await (await page.$('#audio-input')).uploadFile(join(dir, 'tone-named.mp3'));
    await page.waitForSelector('#audio-attachments .clip-item');
    await page.type('#composer-input', 'x');
    await page.keyboard.press('Enter');
    await waitIdle(page);
    const [body] = await sent.all();
    assert.equal(body.messages.at(-1).content[1].input_audio.format, 'mp3');
    const shown = await status(page);
    assert.match(shown, /^Error: /);
    assert.match(shown, /messages\[0\]\.content\[1\]/);
    assert.match(shown, /audio format mp3 does not match the WAV data/);
    assert.equal(await page.$eval('#chat-status', (el) => el.classList.contains('error')), true);
    assert.equal(await text(page, '.msg.assistant.error .error-text'), shown.slice('Error: '.length));
    await page.close();
    assert.deepEqual(problems, []);
  });

  test('a recording from the microphone is sent as a 16-bit mono WAV file the server hears', async (t) => {
    const problems = [];
    const page = await open(problems);
    const sent = recordRequests(page);
    await page.click('#record-button');
    await page.waitForFunction(
      () => document.getElementById('record-button').getAttribute('aria-pressed') === 'true', WAIT);
    assert.equal(await status(page), 'Recording… press Stop recording to attach it.');
    // About a second, by the button's own clock.
    await page.waitForFunction(() => {
      const m = document.getElementById('record-button').textContent.match(/\(([\d.]+) s\)/);
      return m && Number(m[1]) >= 1.0;
    }, WAIT);
    await page.click('#record-button');
    await page.waitForSelector('#audio-attachments .clip-item');
    assert.equal(await text(page, '#record-button'), 'Record');
    assert.equal(await page.$eval('#record-button', (el) => el.getAttribute('aria-pressed')), 'false');
    assert.match(await status(page), /^Recording attached \(\d\.\d s\)\.$/);
    await page.waitForFunction(
      () => / · \d\.\d s$/.test(document.querySelector('#audio-attachments .clip-label').textContent), WAIT);
    assert.match((await clipLabels(page))[0], /^recording 1\.wav · \d\.\d s$/);
    await (await page.$('#composer')).screenshot({ path: join(SHOTS, 'web_audio_recorded.png') });

    // A recording alone is a message.
    await page.click('#send-button');
    await waitIdle(page);
    assert.equal(await status(page), 'Done.');
    const [body] = await sent.all();
    const content = body.messages.at(-1).content;
    assert.equal(content.length, 1);
    assert.equal(content[0].type, 'input_audio');
    assert.equal(content[0].input_audio.format, 'wav');
    assert.doesNotMatch(content[0].input_audio.data, /^data:/);
    const file = readWav(Buffer.from(content[0].input_audio.data, 'base64'));
    assert.deepEqual([file.format, file.channels, file.bits, file.byteRate],
                     [1, 1, 16, file.rate * 2], 'PCM, mono, 16-bit');
    const seconds = file.samples.length / file.rate;
    assert.ok(seconds >= 1.0 && seconds < 5, `${seconds} s recorded`);
    const loudest = Math.max(...file.samples.map(Math.abs));
    assert.ok(loudest > 1000, `the fake microphone's tone was heard (loudest sample ${loudest})`);
    // The server decoded it: about 25 soft tokens a second, plus 2.
    const heard = (await promptTokens(server.base, body)) - (await promptTokens(server.base, withoutAudio(body)));
    t.diagnostic(`${seconds} s at ${file.rate} Hz, loudest sample ${loudest}, ${heard} prompt tokens`);
    assert.ok(Math.abs(heard - (25 * seconds + 2)) <= 2, `${heard} tokens for ${seconds} s`);
    await page.close();
    assert.deepEqual(problems, []);
  });

  test('a refused or missing microphone is said on the status line, and Record can be tried again', async () => {
    const problems = [];
    const page = await open(problems);
    for (const [name, message] of [
      ['NotAllowedError', /^Microphone access was refused: allow it for this page/],
      ['NotFoundError', /^No microphone was found\.$/],
    ]) {
      await page.evaluate((name) => {
        navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('refused', name));
      }, name);
      await page.evaluate(() => { document.getElementById('chat-status').textContent = ''; });
      await page.click('#record-button');
      await page.waitForFunction(
        () => document.getElementById('chat-status').classList.contains('error'), WAIT);
      assert.match(await status(page), message);
      assert.equal(await text(page, '#record-button'), 'Record');
      assert.equal(await page.$eval('#record-button', (el) => el.disabled), false);
      assert.equal(await page.$eval('#record-button', (el) => el.getAttribute('aria-pressed')), 'false');
      assert.equal(await page.$$eval('#audio-attachments .clip-item', (els) => els.length), 0);
    }
    await page.close();
    assert.deepEqual(problems, []);
  });

  test('a page that is not a secure context says why it cannot record', async (t) => {
    const lan = lanAddress();
    const base = lan ? `http://${lan}:${server.port}` : server.base;
    const problems = [];
    const page = await browser.newPage();
    page.setDefaultTimeout(WAIT.timeout);
    if (!lan) {
      t.diagnostic('no non-loopback address: the insecure context is emulated');
      await page.evaluateOnNewDocument(() => Object.defineProperty(window, 'isSecureContext', { value: false }));
    }
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await page.goto(`${base}/`, { waitUntil: 'load', timeout: WAIT.timeout });
    await page.waitForSelector('#record-button:not([hidden])', WAIT);
    assert.equal(await page.evaluate(() => window.isSecureContext), false);
    assert.equal(await page.$eval('#record-button', (el) => el.getAttribute('aria-disabled')), 'true');
    assert.match(await page.$eval('#record-button', (el) => el.title), /^Cannot record: recording needs a secure page/);
    await page.click('#record-button');
    await page.waitForFunction(
      () => document.getElementById('chat-status').classList.contains('error'), WAIT);
    assert.match(await status(page), /^Cannot record: recording needs a secure page: open it over https, or at http:\/\/localhost/);
    assert.equal(await text(page, '#record-button'), 'Record');
    // Attaching files does not need a secure page.
    assert.equal(await page.$eval('#audio-button', (el) => el.disabled || el.hidden), false);
    await page.close();
    assert.deepEqual(problems, []);
  });
});

describe('the chat page on a server without an audio tower', { skip: reason ?? false }, () => {
  let server;
  let browser;
  let profile;
  const problems = [];

  before(async () => {
    profile = mkdtempSync(join(tmpdir(), 'tandem-chromium-'));
    server = await startServer(['--parallel', '1'], { timeoutMs: 120000 });
    browser = await launchBrowser(profile, FAKE_MICROPHONE);
  });

  after(() => tearDown(browser, server, profile));

  test('the audio controls are hidden and a dropped recording is refused saying why', async () => {
    const page = await openPage(browser, server.base, problems);
    await page.waitForFunction((id) => document.getElementById('state-model').textContent === id,
                               WAIT, MODEL_ID());
    const props = await (await fetch(`${server.base}/props`)).json();
    assert.equal(props.modalities.audio, false);
    assert.equal(await page.$eval('#audio-button', (el) => el.hidden), true);
    assert.equal(await page.$eval('#record-button', (el) => el.hidden), true);
    await dropFile(page, 'tone.wav', wav(0.3), 'audio/wav');
    await page.waitForFunction(
      () => /cannot hear recordings/.test(document.getElementById('chat-status').textContent), WAIT);
    assert.equal(await status(page),
                 'This server cannot hear recordings: start the server with -mm FILE, an mmproj holding an audio tower.');
    assert.equal(await page.$eval('#audio-attachments', (el) => el.hidden), true);
    await page.close();
    assert.deepEqual(problems, []);
  });
});
