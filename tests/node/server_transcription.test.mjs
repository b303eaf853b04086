// OpenAI's audio API on `tandem serve -mm` (an mmproj with the audio tower), through the official
// `openai` client: audio.transcriptions.create in each response_format and streamed, and
// audio.translations.create. The transcript is the chat answer to the same message (the route is
// the chat route with a form in front), so it is checked against /v1/chat/completions with
// speculation on and off; bad forms are 400s naming the field; a server without an audio tower
// says how to start one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { wav } from './test_wav.mjs';
import { env, startServer } from './server_harness.mjs';

function skip() {
  if (!env.bin || !env.model || !process.env.TANDEM_MMPROJ) {
    return 'TANDEM_BIN, TANDEM_MODEL and TANDEM_MMPROJ are not set (run through ctest)';
  }
  return false;
}

const INSTRUCTION = 'Transcribe the following speech segment in its original language. ' +
  'Write only the text that is spoken.';

describe('transcriptions', { skip: skip(), timeout: 170000 }, () => {
  let server;
  let openai;
  const clip = wav(1.0, { seed: 5 });

  before(async () => {
    server = await startServer(['-mm', process.env.TANDEM_MMPROJ]);
    openai = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  const file = (bytes = clip, name = 'clip.wav') => toFile(bytes, name);

  test('json: the text is the chat answer to the same message, with and without speculation', async () => {
    const t = await openai.audio.transcriptions.create({ file: await file() });
    assert.equal(typeof t.text, 'string');
    assert.ok(t.text.length > 0);
    const chat = (speculative) => openai.chat.completions.create({
      max_tokens: 64 + 12, temperature: 0, ...(speculative === undefined ? {} : { speculative }),
      messages: [{ role: 'user', content: [{ type: 'text', text: INSTRUCTION },
        { type: 'input_audio', input_audio: { data: clip.toString('base64'), format: 'wav' } }] }],
    });
    const on = await chat();
    const off = await chat({ enabled: false });
    assert.equal(on.choices[0].message.content.trim(), t.text);
    assert.equal(off.choices[0].message.content.trim(), t.text);
    assert.ok(on.timings.speculative.drafted > 0, 'MTP drafted after the recording');
  });

  test('text, verbose_json, srt and vtt', async () => {
    const plain = await openai.audio.transcriptions.create({ file: await file(), response_format: 'json' });
    const text = await openai.audio.transcriptions.create({ file: await file(), response_format: 'text' });
    assert.equal(String(text).trim(), plain.text);
    const verbose = await openai.audio.transcriptions.create({
      file: await file(), response_format: 'verbose_json', language: 'fr',
    });
    assert.equal(verbose.task, 'transcribe');
    assert.equal(verbose.language, 'french');
    assert.equal(verbose.duration, 1);
    assert.equal(verbose.segments.length, 1);
    assert.equal(verbose.segments[0].end, 1);
    const srt = String(await openai.audio.transcriptions.create({ file: await file(), response_format: 'srt' }));
    assert.match(srt, /^1\r?\n00:00:00,000 --> 00:00:01,000\r?\n/);
    const vtt = String(await openai.audio.transcriptions.create({ file: await file(), response_format: 'vtt' }));
    assert.match(vtt, /^WEBVTT\r?\n\r?\n00:00:00\.000 --> 00:00:01\.000\r?\n/);
  });

  test('stream: transcript.text.delta events, then transcript.text.done with the whole text', async () => {
    const whole = await openai.audio.transcriptions.create({ file: await file() });
    const stream = await openai.audio.transcriptions.create({ file: await file(), stream: true });
    let deltas = '';
    let done = null;
    for await (const event of stream) {
      if (event.type === 'transcript.text.delta') deltas += event.delta;
      if (event.type === 'transcript.text.done') done = event;
    }
    assert.ok(done, 'a transcript.text.done event');
    assert.equal(done.text, whole.text);
    assert.equal(deltas.trim(), whole.text);
    assert.equal(done.usage.seconds, 1);
  });

  test('translations: another instruction, English', async () => {
    const tr = await openai.audio.translations.create({ file: await file(), response_format: 'verbose_json' });
    assert.equal(tr.task, 'translate');
    assert.equal(tr.language, 'english');
    assert.equal(typeof tr.text, 'string');
  });

  test('bad forms are 400s naming the field, and the server lives on', async () => {
    const post = async (path, form) => {
      const r = await fetch(`${server.base}${path}`, { method: 'POST', body: form });
      return { status: r.status, body: await r.json() };
    };
    const form = (fields, bytes = clip, name = 'clip.wav') => {
      const f = new FormData();
      if (bytes) f.append('file', new Blob([bytes]), name);
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      return f;
    };
    const cases = [
      ['/v1/audio/transcriptions', form({ bogus: '1' }), /bogus/],
      ['/v1/audio/transcriptions', form({ timestamp_granularities: 'word' }), /timestamp_granularities/],
      ['/v1/audio/transcriptions', form({ 'timestamp_granularities[]': 'word' }), /word/],
      ['/v1/audio/transcriptions', form({ response_format: 'diarized_json' }), /response_format/],
      ['/v1/audio/transcriptions', form({ temperature: '1.5' }), /temperature/],
      ['/v1/audio/transcriptions', form({ language: 'english' }), /language/],
      ['/v1/audio/transcriptions', form({}, null), /file/],
      ['/v1/audio/transcriptions', form({}, Buffer.from('not audio at all'), 'a.bin'), /file: .*not a WAV, FLAC, Ogg or MP3/],
      ['/v1/audio/transcriptions', form({}, clip, 'clip.mp3'), /file: .*does not match/],
      ['/v1/audio/transcriptions', form({}, clip, 'clip.m4a'), /file: .*m4a is not supported/],
      ['/v1/audio/transcriptions', form({}, Buffer.alloc(0)), /file/],
      ['/v1/audio/translations', form({ language: 'fr' }), /language/],
    ];
    for (const [path, f, re] of cases) {
      const r = await post(path, f);
      assert.equal(r.status, 400, `${re}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error.message, re);
    }
    const notForm = await fetch(`${server.base}/v1/audio/transcriptions`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}',
    });
    assert.equal(notForm.status, 400);
    const ok = await openai.audio.transcriptions.create({ file: await file() });
    assert.equal(typeof ok.text, 'string');
  });
});

describe('transcriptions without an audio tower', { skip: skip(), timeout: 60000 }, () => {
  test('the route says how to start the server', async () => {
    const server = await startServer();
    try {
      const client = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
      await assert.rejects(client.audio.transcriptions.create({ file: await toFile(wav(0.3), 'a.wav') }),
        (e) => e.status === 400 && /no audio encoder/.test(e.message));
    } finally {
      await server.stop();
    }
  });
});
