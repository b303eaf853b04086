// Benchmark (not a test): aggregate generation throughput of a running `tandem serve` at several
// numbers of concurrent streams, with and without MTP speculation (per-request
// "speculative": {"enabled": false}). Prints a markdown table for bench/README.md.
//
//   node tests/node/server_bench.mjs --base http://127.0.0.1:8080 --streams 1,2,4,8 --tokens 128
//
// Start the server with --parallel at least the largest stream count. Greedy decoding, distinct
// prompts per stream, one warm-up request first.
import { parseArgs } from 'node:util';
import { request } from './server_http.mjs';

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: 'http://127.0.0.1:8080' },
    streams: { type: 'string', default: '1,2,4,8' },
    tokens: { type: 'string', default: '128' },
    key: { type: 'string', default: '' },
  },
});
const tokens = Number(values.tokens);
const headers = values.key ? { authorization: `Bearer ${values.key}` } : {};
const topics = ['rivers', 'mountains', 'cities', 'oceans', 'forests', 'deserts', 'islands', 'stars'];

async function one(i, speculative) {
  const r = await request(values.base, '/v1/chat/completions', {
    headers,
    timeoutMs: 600000,
    body: {
      messages: [{ role: 'user', content: `Write a long essay about ${topics[i % topics.length]}.` }],
      max_tokens: tokens, temperature: 0, speculative: { enabled: speculative },
    },
  });
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  return r.json;
}

async function round(n, speculative) {
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: n }, (_, i) => one(i, speculative)));
  const seconds = (performance.now() - t0) / 1000;
  const generated = results.reduce((s, r) => s + r.usage.completion_tokens, 0);
  const drafted = results.reduce((s, r) => s + r.timings.draft_n, 0);
  const accepted = results.reduce((s, r) => s + r.timings.draft_n_accepted, 0);
  return { seconds, generated, tps: generated / seconds, acceptance: drafted ? accepted / drafted : 0 };
}

await one(0, true);
console.log(`| streams | plain tok/s | MTP tok/s | MTP / plain | MTP acceptance |`);
console.log(`|--:|--:|--:|--:|--:|`);
for (const n of values.streams.split(',').map(Number)) {
  const plain = await round(n, false);
  const mtp = await round(n, true);
  console.log(`| ${n} | ${plain.tps.toFixed(1)} | ${mtp.tps.toFixed(1)} | ` +
              `${(mtp.tps / plain.tps).toFixed(2)}x | ${(100 * mtp.acceptance).toFixed(1)}% |`);
}
