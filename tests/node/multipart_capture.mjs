// Captures the multipart/form-data bodies the official openai npm package sends for
// audio.transcriptions.create and audio.translations.create, against a tiny local HTTP server,
// and writes each as a corpus file of fuzz_multipart: the Content-Type value, "\n", the body.
// Run by tests/fuzz/make_multipart_corpus.sh (which says what the files are for):
//   node multipart_capture.mjs AUDIO_FILE OUTPUT_DIR
// The package has two encoders: a File or Blob goes through Node's FormData (undici), a stream
// (fs.createReadStream) through the package's own; one capture each, and a translation.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';

const [audioPath, outDir] = process.argv.slice(2);
if (!audioPath || !outDir) {
  console.error('usage: node multipart_capture.mjs AUDIO_FILE OUTPUT_DIR');
  process.exit(2);
}
const audio = fs.readFileSync(audioPath);

let captured = null;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    captured = { contentType: req.headers['content-type'], body: Buffer.concat(chunks) };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"text": "ok"}');
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const client = new OpenAI({
  apiKey: 'unused', baseURL: `http://127.0.0.1:${server.address().port}/v1`, maxRetries: 0,
});

async function capture(name, send) {
  captured = null;
  await send().catch(() => {});  // a text format's answer may not parse; the body is what counts
  if (!captured) throw new Error(`${name}: nothing captured`);
  const file = path.join(outDir, `${name}.form`);
  fs.writeFileSync(file, Buffer.concat([Buffer.from(`${captured.contentType}\n`), captured.body]));
  console.log(`${file}: ${captured.body.length} bytes`);
}

await capture('openai_form_data', async () => client.audio.transcriptions.create({
  file: await toFile(audio, 'clip.wav', { type: 'audio/wav' }),
  model: 'whisper-1',
  language: 'en',
  temperature: 0.2,
  response_format: 'verbose_json',
  timestamp_granularities: ['segment'],
  prompt: 'Hi "there"\nnew line',
}));
await capture('openai_streaming', async () => client.audio.transcriptions.create({
  file: fs.createReadStream(audioPath),
  model: 'whisper-1',
  prompt: 'a\nb',
  response_format: 'srt',
}));
await capture('openai_translation', async () => client.audio.translations.create({
  file: new File([audio], 'clip.mp3'),
  model: 'whisper-1',
  response_format: 'text',
  temperature: 0,
}));
server.close();
