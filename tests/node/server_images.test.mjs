// Images through `tandem serve -mm`: the official `openai` (image_url data URLs) and
// `@anthropic-ai/sdk` (base64 image blocks) clients and llama-server's /completion with
// multimodal_data. Greedy output after an image is the same with speculation on and off; the same
// image twice costs no second encode and no re-prefill; bad images are 400s naming the part; a
// server without -mm says how to start it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dataUrl, png } from './test_png.mjs';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { MODEL_ID, env, startServer } from './server_harness.mjs';

function skip() {
  if (!env.bin || !env.model || !process.env.TANDEM_MMPROJ) {
    return 'TANDEM_BIN, TANDEM_MODEL and TANDEM_MMPROJ are not set (run through ctest)';
  }
  return false;
}

describe('images', { skip: skip(), timeout: 170000 }, () => {
  let server;
  let openai;
  let anthropic;
  const red = png(96, 144, 1);
  const blue = png(144, 96, 2);

  before(async () => {
    server = await startServer(['-mm', process.env.TANDEM_MMPROJ, '--image-resize', 'llamacpp',
      '--image-min-tokens', '1', '--image-max-tokens', '16', '--image-max-count', '3']);
    openai = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'unused', baseURL: server.base, maxRetries: 0 });
  });

  after(async () => {
    const status = await server?.stop();
    assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
  });

  const chat = (image, extra = {}) => ({
    model: MODEL_ID(), max_tokens: 24, temperature: 0,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' },
      { type: 'image_url', image_url: { url: dataUrl(image) } }] }],
    ...extra,
  });

  test('/props and /v1/models say vision is loaded', async () => {
    const props = await (await fetch(`${server.base}/props`)).json();
    assert.deepEqual(props.modalities, { vision: true, audio: true });
    const models = await openai.models.list();
    assert.equal(models.data[0].meta.modalities.vision, true);
  });

  test('openai: an image_url part is seen, and speculation does not change greedy output', async () => {
    const on = await openai.chat.completions.create(chat(red));
    const off = await openai.chat.completions.create(chat(red, { speculative: { enabled: false } }));
    const other = await openai.chat.completions.create(chat(blue, { speculative: { enabled: false } }));
    const text = await openai.chat.completions.create({
      model: MODEL_ID(), max_tokens: 24, temperature: 0,
      messages: [{ role: 'user', content: 'What is in this picture?' }],
    });
    assert.equal(on.choices[0].message.content, off.choices[0].message.content);
    assert.ok(on.timings.speculative.drafted > 0, 'MTP drafted after the image');
    // 96 x 144 at up to 16 tokens: 2 x 3 soft tokens plus the two markers.
    assert.equal(on.usage.prompt_tokens, text.usage.prompt_tokens + 6 + 2);
    assert.notEqual(other.choices[0].message.content + other.usage.prompt_tokens,
      off.choices[0].message.content + off.usage.prompt_tokens);
    assert.equal(typeof on.timings.image_encode_ms, 'number');
  });

  test('the same image and text again: no encode, the prompt served by the cache', async () => {
    const first = await openai.chat.completions.create(chat(png(48, 48, 9)));
    const again = await openai.chat.completions.create(chat(png(48, 48, 9)));
    assert.ok(first.timings.image_encode_ms > 0);
    assert.equal(again.timings.image_encode_ms, 0);
    assert.equal(again.timings.cache_n, again.usage.prompt_tokens - 1);
    assert.equal(again.choices[0].message.content, first.choices[0].message.content);
  });

  test('streamed with an image', async () => {
    const stream = await openai.chat.completions.create({ ...chat(red), stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    const whole = await openai.chat.completions.create(chat(red));
    assert.equal(text, whole.choices[0].message.content);
  });

  test('anthropic: a base64 image block equals the openai image_url part', async () => {
    const msg = await anthropic.messages.create({
      model: MODEL_ID(), max_tokens: 24, temperature: 0,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: red.toString('base64') } }] }],
    });
    const same = await openai.chat.completions.create(chat(red));
    assert.equal(msg.content[0].text, same.choices[0].message.content);
  });

  test('llama-server /completion with multimodal_data', async () => {
    const r = await fetch(`${server.base}/completion`, {
      method: 'POST',
      body: JSON.stringify({ prompt: 'Look: <__media__> now', multimodal_data: [red.toString('base64')],
        n_predict: 8, temperature: 0 }),
    });
    assert.equal(r.status, 200);
    const body = await r.json();
    assert.equal(typeof body.content, 'string');
    // llama-server's own form: the prompt as an object.
    const same = await fetch(`${server.base}/completion`, {
      method: 'POST',
      body: JSON.stringify({ prompt: { prompt_string: 'Look: <__media__> now', multimodal_data: [red.toString('base64')] },
        n_predict: 8, temperature: 0 }),
    });
    assert.equal(same.status, 200);
    assert.equal((await same.json()).content, body.content);
    const bad = await fetch(`${server.base}/completion`, {
      method: 'POST',
      body: JSON.stringify({ prompt: 'no marker', multimodal_data: [red.toString('base64')], n_predict: 2 }),
    });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /<__media__>/);
  });

  test('bad images are 400s naming the part, and the server lives on', async () => {
    const cases = [
      [dataUrl(red.subarray(0, 60)), /messages\[0\]\.content\[1\]/],
      [dataUrl(red, 'image/jpeg'), /does not match/],
      [dataUrl(Buffer.from('hello world')), /not a PNG, JPEG or WebP/],
      ['https://example.com/cat.png', /remote image URLs are not fetched/],
      ['data:image/png;base64,%%%', /messages\[0\]\.content\[1\]/],
    ];
    for (const [url, re] of cases) {
      await assert.rejects(openai.chat.completions.create({
        model: MODEL_ID(), max_tokens: 4,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x' },
          { type: 'image_url', image_url: { url } }] }],
      }), (e) => e.status === 400 && re.test(e.message), url.slice(0, 40));
    }
    await assert.rejects(anthropic.messages.create({
      model: MODEL_ID(), max_tokens: 4,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }],
    }), (e) => e.status === 400 && /not fetched/.test(e.message));
    // One image over --image-max-count: refused at the first image past the limit.
    const image = { type: 'image_url', image_url: { url: dataUrl(png(48, 48, 3)) } };
    await assert.rejects(openai.chat.completions.create({
      model: MODEL_ID(), max_tokens: 4,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, image, image, image, image] }],
    }), (e) => e.status === 400 && /messages\[0\]\.content\[4\]/.test(e.message)
      && /at most 3/.test(e.message), 'too many images');
    const ok = await openai.chat.completions.create(chat(red));
    assert.ok(ok.choices[0].message.content !== undefined);
  });
});

describe('images without -mm', { skip: skip(), timeout: 60000 }, () => {
  test('a server without a projector says how to start one', async () => {
    const server = await startServer();
    try {
      const client = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
      await assert.rejects(client.chat.completions.create({
        model: MODEL_ID(), max_tokens: 4,
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl(png(48, 48, 1)) } }] }],
      }), (e) => e.status === 400 && /no vision projector: start the server with --mmproj/.test(e.message)
        && /messages\[0\]\.content\[0\]/.test(e.message));
      const props = await (await fetch(`${server.base}/props`)).json();
      assert.equal(props.modalities.vision, false);
    } finally {
      await server.stop();
    }
  });
});
