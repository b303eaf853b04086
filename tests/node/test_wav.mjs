// Test recordings for the node suites: WAV files of a few tones written here (16-bit PCM or
// 32-bit float, any sample rate and channel count), WAV files of given samples, reading back the
// 16-bit PCM WAV files other programs write, and a plain resampler for them.

// `seconds` of a sum of tones (Hz) with a slow swell, as a WAV file (mono unless `channels`);
// `gain` scales the peak (0.4 by default), `float` writes 32-bit float samples instead of 16-bit.
export function wav(seconds, {
  rate = 16000, channels = 1, tones = [220, 660, 1800], seed = 1, gain = 0.4, float = false,
} = {}) {
  const frames = Math.round(seconds * rate);
  const samples = new Float32Array(frames * channels);
  for (let i = 0; i < frames; i++) {
    const t = i / rate;
    let v = 0;
    for (const [k, hz] of tones.entries()) v += Math.sin(2 * Math.PI * (hz + seed * (k + 1)) * t);
    v *= (gain / tones.length) * (0.6 + 0.4 * Math.sin(2 * Math.PI * 0.7 * t));
    for (let c = 0; c < channels; c++) samples[i * channels + c] = v;
  }
  return wavOf(samples, { rate, channels, float });
}

// A WAV file of interleaved `samples` in [-1, 1]: 16-bit PCM (rounded, clipped) or 32-bit float
// (WAVE_FORMAT_IEEE_FLOAT, the samples as they are).
export function wavOf(samples, { rate = 16000, channels = 1, float = false } = {}) {
  const width = float ? 4 : 2;
  const data = Buffer.alloc(samples.length * width);
  samples.forEach((v, i) => {
    if (float) data.writeFloatLE(v, 4 * i);
    else data.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(v * 32767))), 2 * i);
  });
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(float ? 3 : 1, 20);  // PCM or IEEE float
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * width, 28);
  header.writeUInt16LE(channels * width, 32);
  header.writeUInt16LE(8 * width, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

// The samples of a 16-bit PCM WAV file (s / 32768, interleaved), its rate and channel count.
// Walks the chunks; a data chunk of unknown length (0 or 0xFFFFFFFF, as a program writing to a
// pipe leaves it) runs to the end of the file.
export function readWav(bytes) {
  if (bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') {
    throw new Error('not a WAV file');
  }
  let format;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = bytes.toString('latin1', at, at + 4);
    let size = bytes.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      format = { tag: bytes.readUInt16LE(at + 8), channels: bytes.readUInt16LE(at + 10),
        rate: bytes.readUInt32LE(at + 12), bits: bytes.readUInt16LE(at + 22) };
    } else if (id === 'data') {
      if (!format || format.tag !== 1 || format.bits !== 16) throw new Error('not 16-bit PCM');
      if (size === 0 || at + 8 + size > bytes.length) size = bytes.length - at - 8;
      const samples = new Float32Array(Math.floor(size / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(at + 8 + 2 * i) / 32768;
      return { samples, rate: format.rate, channels: format.channels };
    }
    at += 8 + size + (size & 1);
  }
  throw new Error('no data chunk');
}

// Mono `samples` from rate `from` to rate `to` by a Hann-windowed sinc (cut off at 0.9 of the
// lower Nyquist frequency, 16 zero crossings a side): test material, not a reference resampler.
export function resample(samples, from, to) {
  const out = new Float32Array(Math.round(samples.length * to / from));
  const cutoff = 0.9 * Math.min(1, to / from);
  const half = Math.ceil(16 / cutoff);
  for (let j = 0; j < out.length; j++) {
    const x = j * from / to;
    const centre = Math.floor(x);
    let sum = 0;
    for (let i = centre - half + 1; i <= centre + half; i++) {
      if (i < 0 || i >= samples.length) continue;
      const d = x - i;
      const w = 0.5 + 0.5 * Math.cos(Math.PI * d / half);
      const sinc = d === 0 ? 1 : Math.sin(Math.PI * cutoff * d) / (Math.PI * cutoff * d);
      sum += samples[i] * cutoff * sinc * w;
    }
    out[j] = sum;
  }
  return out;
}
