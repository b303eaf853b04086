// llama.cpp as the oracle after a recording: `tandem serve` with llama.cpp's log-mel floor
// (--audio-log-floor clamp) and llama-server (the peer build in ../shared/peer, or
// TANDEM_PEER_BIN; run_node_test.sh skips the suite, saying so, when it cannot run) serve the
// same tiny text GGUF and mmproj with the gemma4a tower. The same greedy /completion with
// multimodal_data and the same chat request with an input_audio part must give the same tokens
// and top log-probs, for each container a 16 kHz mono recording comes in.
//
// What is compared and why (docs/audio.md § Tests):
// - 16 kHz mono recordings (tones, a quiet tone, espeak-ng speech as 16-bit WAV, 32-bit float
//   WAV and FLAC): held to TOL. The engines decode them to the same samples and neither
//   resamples. MP3 (two decoders) to MP3_TOL.
// - 44.1 kHz stereo and espeak-ng's own 22.05 kHz: only the prompt length and a loose bound
//   (RESAMPLED_TOL): tandem resamples with libsoxr, llama.cpp with its own resampler.
// - tandem's default floor (transformers' ln(mel + 0.001)) must be further than TOL from
//   llama.cpp's ln(max(mel, 0.001)) on the quiet tone, so the option is what makes them match.
// - The mmproj: TANDEM_MMPROJ_NO_CLAMPS, and TANDEM_MMPROJ with clamp bounds, where q, k and v
//   share one set as in the published checkpoints (llama.cpp 3f545be clamps their shared input
//   in place, v's bounds first, then k's, then q's, which differs from clamping each copy only
//   when their bounds differ: docs/audio.md § Against llama.cpp).
// Audio rows are causal in both engines and the recordings are under 30 s (one piece each).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flac, mp3, speech } from './test_audio_tools.mjs';
import { resample, wav, wavOf } from './test_wav.mjs';
import { peerBin, startPeerServer, usablePeer } from './peer.mjs';
import {
  GEMMA4_TEMPLATE, chatSteps, compareSteps, measureSteps, nonUtf8Tokens, post, steps,
} from './peer_compare.mjs';
import { env, startServer } from './server_harness.mjs';

const files = {
  model: process.env.TANDEM_MODEL_F32,
  mmproj: process.env.TANDEM_MMPROJ_NO_CLAMPS,
  clamped: process.env.TANDEM_MMPROJ,
};

function skip() {
  if (!env.bin || !env.assistant || !files.model || !files.mmproj || !files.clamped) {
    return 'TANDEM_BIN, TANDEM_ASSISTANT, TANDEM_MODEL_F32, TANDEM_MMPROJ and '
      + 'TANDEM_MMPROJ_NO_CLAMPS are not set (run through ctest)';
  }
  return false;
}

// Bound on |Δ logprob| between the engines for a token both list. On these files (f32 text
// weights, f16 tower without clamp bounds) and 16 kHz mono recordings the largest seen is
// 0.0052 over 16 steps x 5 candidates (WAV, float WAV, FLAC; 0.0055 in chat), about what a
// text-only prompt shows (llama.cpp's fp16 GELU table in the text FFN, tools/reference/README.md
// § Test results) plus llama.cpp's f16 rounding in the tower. A wrong front-end rule moves them
// by more: transformers' log floor on the quiet tone by 0.061; a file whose q, k and v have
// different bounds (which llama.cpp clamps in place, one after another) by 0.10.
const TOL = 0.02;
// MP3: each engine has its own decoder (libmpg123 in tandem), and MP3 decoders need not give
// the same samples: 0.0088 (speech) and 0.0136 (tones) are the largest seen.
const MP3_TOL = 0.04;
// Recordings each engine resamples its own way (tandem with libsoxr): the first step's top-5
// log-probs, 0.078 (44.1 kHz stereo tones) and 0.103 (22.05 kHz speech) the largest seen; the
// prompt length (one row per 40 ms of the resampled recording) must be equal.
const RESAMPLED_TOL = 0.3;

// The recordings, each { bytes } or { why } (a tool is missing). FLAC and MP3 hold the 16 kHz
// speech, or the tones without espeak-ng (`source` says which).
function recordings() {
  const r = {
    tone: { bytes: wav(1.0) },
    quiet: { bytes: wav(1.0, { gain: 0.01 }) },
    other: { bytes: wav(1.0, { seed: 3, tones: [300, 1200] }) },
    stereo44: { bytes: wav(1.0, { rate: 44100, channels: 2 }) },
  };
  const spoken = speech('The quick brown fox jumps over the lazy dog.');
  if (spoken.why) {
    for (const name of ['speech', 'float', 'speech22']) r[name] = { why: spoken.why };
    r.source = `tones (${spoken.why})`;
  } else {
    const at16k = resample(spoken.samples, spoken.rate, 16000);
    r.speech = { bytes: wavOf(at16k) };
    r.float = { bytes: wavOf(at16k, { float: true }) };
    r.speech22 = { bytes: spoken.bytes };
    r.source = 'speech';
  }
  r.flac = flac(r.speech.bytes ?? r.tone.bytes);
  r.mp3 = mp3(r.speech.bytes ?? r.tone.bytes);
  return r;
}

describe('llama.cpp as the oracle after a recording', { skip: skip(), timeout: 170000 }, () => {
  let why;
  let banned;
  let clips;
  const servers = {};

  before(async () => {
    const found = usablePeer();
    if (!found.run) {
      why = `llama-server (${peerBin}) cannot be used, ${found.why}: the comparison does not run`;
      return;
    }
    clips = recordings();
    const dir = mkdtempSync(join(tmpdir(), 'tandem-audio-oracle-'));
    const template = join(dir, 'gemma4.jinja');
    writeFileSync(template, GEMMA4_TEMPLATE);
    const peer = (mm) => startPeerServer(found.run,
      ['-m', files.model, '-mm', mm, '-t', '1', '-c', '1024', '--chat-template-file', template],
      { LLAMA_MEDIA_MARKER: '<__media__>' });
    const tandem = (mm, floor) => startServer(['-mm', mm, ...floor, '--no-warmup'], { model: files.model });
    const clamp = ['--audio-log-floor', 'clamp'];
    servers.llama = await peer(files.mmproj);
    servers.tandem = await tandem(files.mmproj, clamp);
    servers.transformers = await tandem(files.mmproj, []);
    servers.llamaClamped = await peer(files.clamped);
    servers.tandemClamped = await tandem(files.clamped, clamp);
    banned = await nonUtf8Tokens(servers.tandem.base);
  });

  after(async () => {
    for (const [name, s] of Object.entries(servers)) {
      if (name.startsWith('llama')) {
        s.stop();
        continue;
      }
      const status = await s.stop();
      assert.equal(status?.code, 0, `server exit: ${JSON.stringify(status)}`);
    }
  });

  const completion = (bytes) => ({
    prompt: { prompt_string: 'Hear: <__media__> now tell', multimodal_data: [bytes.toString('base64')] },
    n_predict: 16, temperature: 0, n_probs: 5, logit_bias: banned.map((id) => [id, -100]),
  });

  // Both engines' /completion answers for the recording, with the same prompt length.
  async function answers(ours, theirs, bytes) {
    const [o, p] = [await post(ours.base, '/completion', completion(bytes)),
      await post(theirs.base, '/completion', completion(bytes))];
    assert.equal(o.tokens_evaluated, p.tokens_evaluated, 'the same prompt rows: text, markers, one row per 40 ms');
    return [steps(o.completion_probabilities), steps(p.completion_probabilities)];
  }

  test('/props: both servers have an audio tower', async (t) => {
    if (why) return t.skip(why);
    for (const name of ['llama', 'tandem']) {
      const props = await (await fetch(`${servers[name].base}/props`)).json();
      assert.equal(props.modalities.audio, true, `${name}: ${JSON.stringify(props.modalities)}`);
    }
  });

  const compared = [
    ['tone', '16-bit WAV of tones'],
    ['quiet', '16-bit WAV of a quiet tone (the log-mel floor matters)'],
    ['speech', '16-bit WAV of espeak-ng speech'],
    ['float', '32-bit float WAV of the speech'],
    ['flac', 'FLAC (lossless)'],
    ['mp3', 'MP3 at 64 kbit/s (two decoders)'],
  ];
  for (const [name, what] of compared) {
    test(`/completion with multimodal_data, ${what}, 16 kHz mono: greedy tokens and top-5 log-probs`, async (t) => {
      if (why) return t.skip(why);
      if (clips[name].why) return t.skip(clips[name].why);
      const [o, p] = await answers(servers.tandem, servers.llama, clips[name].bytes);
      const tol = name === 'mp3' ? MP3_TOL : TOL;
      const { agreed, worst } = compareSteps(o, p, name, tol);
      const of = ['flac', 'mp3'].includes(name) ? `${clips.source}: ` : '';
      t.diagnostic(`${of}${agreed} of 16 greedy steps compared before any near-tie, max |Δlogprob| ${worst.toFixed(4)} (bound ${tol})`);
      assert.ok(agreed >= 8, `only ${agreed} steps before the first near-tie`);
    });
  }

  test('chat with an input_audio part: the same prompt, tokens and top-3 log-probs', async (t) => {
    if (why) return t.skip(why);
    const clip = clips.speech.bytes ?? clips.tone.bytes;
    const body = {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Transcribe this:' },
        { type: 'input_audio', input_audio: { data: clip.toString('base64'), format: 'wav' } }] }],
      max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 3,
      logit_bias: Object.fromEntries(banned.map((id) => [String(id), -100])),
    };
    const [o, p] = [await post(servers.tandem.base, '/v1/chat/completions', body),
      await post(servers.llama.base, '/v1/chat/completions', body)];
    assert.equal(o.usage.prompt_tokens, p.usage.prompt_tokens, 'the same rendered prompt');
    const { agreed, worst } = compareSteps(chatSteps(o), chatSteps(p), 'chat', TOL);
    t.diagnostic(`${clips.source}: ${agreed} of 12 chat tokens compared before any near-tie, max |Δlogprob| ${worst.toFixed(4)}`);
    assert.ok(agreed >= 4, `only ${agreed} chat tokens before the first near-tie`);
  });

  for (const [name, what] of [['stereo44', '44.1 kHz stereo tones'], ['speech22', 'espeak-ng\'s 22.05 kHz speech']]) {
    test(`resampled, ${what}: the same prompt length, log-probs within ${RESAMPLED_TOL}`, async (t) => {
      if (why) return t.skip(why);
      if (clips[name].why) return t.skip(clips[name].why);
      const [o, p] = await answers(servers.tandem, servers.llama, clips[name].bytes);
      const { agreed, worst } = measureSteps(o, p, TOL);
      const peer = new Map(p[0].top);
      const first = o[0].top.filter(([id]) => peer.has(id)).map(([id, lp]) => [id, Math.abs(lp - peer.get(id))]);
      const firstWorst = Math.max(...first.map(([, d]) => d));
      t.diagnostic(`first step: ${first.length} of 5 candidates shared, max |Δlogprob| ${firstWorst.toFixed(4)}; `
        + `${agreed} of 16 steps before the tokens differ, max |Δlogprob| ${worst.toFixed(4)}`);
      assert.ok(first.length >= 3, `the first step's top-5 share only ${first.length} tokens`);
      assert.ok(firstWorst <= RESAMPLED_TOL, `first step: ${JSON.stringify(first)}`);
    });
  }

  test('transformers\' log-mel floor (tandem\'s default) is further than the bound on the quiet tone', async (t) => {
    if (why) return t.skip(why);
    const [o, p] = await answers(servers.transformers, servers.llama, clips.quiet.bytes);
    const { agreed, worst, problems } = measureSteps(o, p, TOL);
    t.diagnostic(`${agreed} steps agreed, max |Δlogprob| ${worst.toFixed(4)}`);
    assert.ok(problems.length > 0, `ln(mel + 0.001) stayed within ${TOL} of llama.cpp: max ${worst.toFixed(4)}`);
  });

  test('clamped audio linears (the E2B/E4B towers)', async (t) => {
    if (why) return t.skip(why);
    const clip = clips.speech.bytes ?? clips.tone.bytes;
    const [o, p] = await answers(servers.tandemClamped, servers.llamaClamped, clip);
    const { agreed, worst, problems } = measureSteps(o, p, TOL);
    t.diagnostic(`${agreed} steps agreed, max |Δlogprob| ${worst.toFixed(4)}`);
    assert.deepEqual(problems, []);
  });

  test('the comparison is not vacuous: another recording moves the answer', async (t) => {
    if (why) return t.skip(why);
    const [a, b] = [await post(servers.tandem.base, '/completion', completion(clips.tone.bytes)),
      await post(servers.tandem.base, '/completion', completion(clips.other.bytes))];
    const [x, y] = [a, b].map((r) => new Map(r.completion_probabilities[0].top_logprobs.map((q) => [q.id, q.logprob])));
    const moved = [...x].some(([id, lp]) => !y.has(id) || Math.abs(lp - y.get(id)) > 10 * TOL);
    assert.ok(moved, `another recording left the first step's top-5 within ${10 * TOL}: ${JSON.stringify([...x])} vs ${JSON.stringify([...y])}`);
  });
});
