// Recordings made with Debian's command-line tools for the node suites (test setup only;
// scripts/install-deps.sh lists them in TEST_PACKAGES): speech from espeak-ng, FLAC from flac,
// MP3 from lame. Each maker returns { bytes } (speech: with its samples), or { why } when its tool
// is missing or fails, so the case that needs it can skip saying so.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav } from './test_wav.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tandem-audio-tools-'));
let serial = 0;

// Runs `tool` with `args`; null when it succeeded, else why not.
function run(tool, args) {
  const r = spawnSync(tool, args, { encoding: 'utf8', timeout: 60000 });
  if (r.error?.code === 'ENOENT') return `${tool} is not installed (Debian package ${tool})`;
  if (r.error || r.status !== 0) return `${tool} ${args.join(' ')} failed: ${r.error ?? r.stderr}`;
  return null;
}

// `text` spoken by espeak-ng's default voice: its 16-bit WAV file (`bytes`) and that file's mono
// samples in [-1, 1) at its rate (22050 Hz).
export function speech(text) {
  const out = join(dir, `speech-${serial++}.wav`);
  const why = run('espeak-ng', ['-w', out, text]);
  if (why) return { why };
  const bytes = readFileSync(out);
  return { bytes, ...readWav(bytes) };
}

// The WAV file `wav` encoded with `tool` (`flac` or `lame`) and `args` before the file names.
function encode(tool, args, wav, ext) {
  const input = join(dir, `in-${serial++}.wav`);
  const output = join(dir, `out-${serial++}.${ext}`);
  writeFileSync(input, wav);
  const names = tool === 'flac' ? ['-o', output, input] : [input, output];
  const why = run(tool, [...args, ...names]);
  return why ? { why } : { bytes: readFileSync(output) };
}

// Lossless: the same 16-bit samples at the same rate.
export const flac = (wav) => encode('flac', ['--silent', '-f'], wav, 'flac');

// 64 kbit/s constant bit rate at the WAV's own rate (16 kHz is an MPEG-2 rate, kept as is).
export const mp3 = (wav) => encode('lame', ['--silent', '-b', '64'], wav, 'mp3');
