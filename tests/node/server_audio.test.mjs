// Audio through `tandem serve -mm` (an mmproj with the gemma4a tower): OpenAI chat `input_audio`
// parts with the official `openai` client, and llama-server's /completion with multimodal_data.
// Greedy output after a recording is the same with speculation on and off; the same recording
// twice costs no second encode and no re-prefill; bad audio is a 400 naming the part; the
// Anthropic Messages API, which has no audio blocks, refuses them saying where audio goes; a
// server without an audio tower says how to start one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { wav } from './test_wav.mjs';
import { MODEL_ID, env, startServer } from './server_harness.mjs';

function skip() {
  if (!env.bin || !env.model || !process.env.TANDEM_MMPROJ) {
    return 'TANDEM_BIN, TANDEM_MODEL and TANDEM_MMPROJ are not set (run through ctest)';
  }
  return false;
}

const part = (bytes, format = 'wav') => ({
  type: 'input_audio', input_audio: { data: bytes.toString('base64'), format },
});

describe('audio', { skip: skip(), timeout: 170000 }, () => {
  let server;
  let openai;
  const second = wav(1.0);        // 99 frames: 25 soft tokens
  const other = wav(1.0, { seed: 3 });

  before(async () => {
    server = await startServer(['-mm', process.env.TANDEM_MMPROJ, '--audio-max-count', '2']);
    openai = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  const chat = (bytes, extra = {}) => ({
    model: MODEL_ID(), max_tokens: 24, temperature: 0,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Transcribe this:' }, part(bytes)] }],
    ...extra,
  });

  test('/props and /v1/models say audio is loaded', async () => {
    const props = await (await fetch(`${server.base}/props`)).json();
    assert.equal(props.modalities.audio, true);
    const models = await openai.models.list();
    assert.equal(models.data[0].meta.modalities.audio, true);
  });

  test('openai: an input_audio part is heard, and speculation does not change greedy output', async () => {
    const on = await openai.chat.completions.create(chat(second));
    const off = await openai.chat.completions.create(chat(second, { speculative: { enabled: false } }));
    const changed = await openai.chat.completions.create(chat(other, { speculative: { enabled: false } }));
    const text = await openai.chat.completions.create({
      model: MODEL_ID(), max_tokens: 24, temperature: 0,
      messages: [{ role: 'user', content: 'Transcribe this:' }],
    });
    assert.equal(on.choices[0].message.content, off.choices[0].message.content);
    assert.ok(on.timings.speculative.drafted > 0, 'MTP drafted after the audio');
    // One second: 25 soft tokens plus <|audio> and <audio|>.
    assert.equal(on.usage.prompt_tokens, text.usage.prompt_tokens + 25 + 2);
    assert.equal(typeof on.timings.audio_encode_ms, 'number');
    assert.equal(on.timings.image_encode_ms, undefined);
    assert.notEqual(changed.choices[0].message.content, off.choices[0].message.content);
  });

  test('the same recording and text again: no encode, the prompt served by the cache', async () => {
    const clip = wav(0.5, { seed: 9 });
    const first = await openai.chat.completions.create(chat(clip));
    const again = await openai.chat.completions.create(chat(clip));
    assert.ok(first.timings.audio_encode_ms > 0);
    assert.equal(again.timings.audio_encode_ms, 0);
    assert.equal(again.timings.cache_n, again.usage.prompt_tokens - 1);
    assert.equal(again.choices[0].message.content, first.choices[0].message.content);
  });

  test('stereo 44.1 kHz is mixed down and resampled; streamed', async () => {
    const stream = await openai.chat.completions.create({
      ...chat(wav(1.0, { rate: 44100, channels: 2 })), stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(typeof text, 'string');
  });

  test('llama-server /completion with multimodal_data: audio told from images by its bytes', async () => {
    const complete = async (bytes) => {
      const r = await fetch(`${server.base}/completion`, {
        method: 'POST',
        body: JSON.stringify({ prompt: 'Hear: <__media__> now', multimodal_data: [bytes.toString('base64')],
          n_predict: 4, temperature: 0, cache_prompt: false }),
      });
      assert.equal(r.status, 200);
      return r.json();
    };
    const one = await complete(second);
    const two = await complete(wav(2.0));  // 199 frames: 50 soft tokens
    assert.equal(two.tokens_evaluated - one.tokens_evaluated, 25);
    assert.equal(typeof one.timings.audio_encode_ms, 'number');  // 0: encoded by an earlier test
    assert.ok(two.timings.audio_encode_ms > 0);
  });

  test('bad audio is a 400 naming the part, and the server lives on', async () => {
    const cases = [
      [part(second.subarray(0, 30)), /messages\[0\]\.content\[1\]/],
      [part(second, 'mp3'), /does not match/],
      [part(Buffer.from('hello world, not audio')), /not a WAV, FLAC, Ogg or MP3 file/],
      [part(second, 'aac'), /messages\[0\]\.content\[1\]/],
      [part(second, ''), /format must not be empty/],
      [part(Buffer.alloc(0)), /messages\[0\]\.content\[1\]/],
      [{ type: 'input_audio', input_audio: { data: 'data:audio/wav;base64,AAAA', format: 'wav' } },
        /not a data URL/],
      [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav', voice: 'x' } },
        /input_audio\.voice: unknown field/],
    ];
    for (const [p, re] of cases) {
      await assert.rejects(openai.chat.completions.create({
        model: MODEL_ID(), max_tokens: 4,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, p] }],
      }), (e) => e.status === 400 && re.test(e.message), `${JSON.stringify(p).slice(0, 80)}`);
    }
    // One recording over --audio-max-count: refused at the first past the limit.
    const clip = part(wav(0.2));
    await assert.rejects(openai.chat.completions.create({
      model: MODEL_ID(), max_tokens: 4,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, clip, clip, clip] }],
    }), (e) => e.status === 400 && /messages\[0\]\.content\[3\]/.test(e.message)
      && /at most 2/.test(e.message), 'too many recordings');
    const anthropic = new Anthropic({ apiKey: 'unused', baseURL: server.base, maxRetries: 0 });
    await assert.rejects(anthropic.messages.create({
      model: MODEL_ID(), max_tokens: 4,
      messages: [{ role: 'user', content: [{ type: 'input_audio', source: {} }] }],
    }), (e) => e.status === 400 && /no audio blocks/.test(e.message)
      && /\/v1\/audio\/transcriptions/.test(e.message));
    const ok = await openai.chat.completions.create(chat(second));
    assert.ok(ok.choices[0].message.content !== undefined);
  });
});

describe('audio without -mm', { skip: skip(), timeout: 60000 }, () => {
  test('a server without an audio tower says how to start one', async () => {
    const server = await startServer();
    try {
      const client = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
      await assert.rejects(client.chat.completions.create({
        model: MODEL_ID(), max_tokens: 4,
        messages: [{ role: 'user', content: [part(wav(0.3))] }],
      }), (e) => e.status === 400 && /no audio encoder/.test(e.message)
        && /messages\[0\]\.content\[0\]/.test(e.message));
      const props = await (await fetch(`${server.base}/props`)).json();
      assert.equal(props.modalities.audio, false);
    } finally {
      await server.stop();
    }
  });
});
