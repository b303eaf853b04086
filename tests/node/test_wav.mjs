// Test recordings for the node suites: 16-bit PCM WAV files of a few tones written here, at any
// sample rate and channel count.

// `seconds` of a sum of tones (Hz) with a slow swell, as a WAV file (mono unless `channels`).
export function wav(seconds, { rate = 16000, channels = 1, tones = [220, 660, 1800], seed = 1 } = {}) {
  const frames = Math.round(seconds * rate);
  const data = Buffer.alloc(frames * channels * 2);
  for (let i = 0; i < frames; i++) {
    const t = i / rate;
    let v = 0;
    for (const [k, hz] of tones.entries()) v += Math.sin(2 * Math.PI * (hz + seed * (k + 1)) * t);
    v *= (0.4 / tones.length) * (0.6 + 0.4 * Math.sin(2 * Math.PI * 0.7 * t));
    for (let c = 0; c < channels; c++) data.writeInt16LE(Math.round(v * 32767), 2 * (i * channels + c));
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);  // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
