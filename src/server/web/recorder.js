// Recording from the microphone as a 16-bit mono WAV file, a format the server decodes
// (MediaRecorder would give WebM/Opus, which it does not). getUserMedia feeds an AudioContext;
// an AudioWorklet (recorder_worklet.js) hands over the samples, encoded here when recording stops.

// Why this page cannot record, or '' when it can: browsers offer the microphone only to secure
// pages (https, or http on localhost / 127.0.0.1).
export function recordingUnavailable() {
  if (!window.isSecureContext) {
    return 'recording needs a secure page: open it over https, or at http://localhost or http://127.0.0.1 on this machine';
  }
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia || !window.AudioWorkletNode) {
    return 'this browser cannot record audio here';
  }
  return '';
}

// What to tell the user when getUserMedia (or the audio graph) fails with `error`.
export function recordingError(error) {
  switch (error && error.name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return 'Microphone access was refused: allow it for this page in the browser\'s site settings, then press Record again.';
    case 'NotFoundError':
    case 'OverconstrainedError':
      return 'No microphone was found.';
    case 'NotReadableError':
    case 'AbortError':
      return 'The microphone could not be opened (is another program using it?).';
    default:
      return `Cannot record: ${(error && error.message) || error}`;
  }
}

// The samples (floats in [-1, 1]) as a 16-bit PCM mono WAV file.
export function encodeWav(samples, rate) {
  const bytes = new DataView(new ArrayBuffer(44 + 2 * samples.length));
  const text = (at, s) => [...s].forEach((c, i) => bytes.setUint8(at + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  bytes.setUint32(4, 36 + 2 * samples.length, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  bytes.setUint32(16, 16, true);
  bytes.setUint16(20, 1, true);  // PCM
  bytes.setUint16(22, 1, true);  // mono
  bytes.setUint32(24, rate, true);
  bytes.setUint32(28, rate * 2, true);
  bytes.setUint16(32, 2, true);
  bytes.setUint16(34, 16, true);
  text(36, 'data');
  bytes.setUint32(40, 2 * samples.length, true);
  samples.forEach((x, i) => {
    const v = Math.max(-1, Math.min(1, x));
    bytes.setInt16(44 + 2 * i, Math.round(v < 0 ? v * 0x8000 : v * 0x7fff), true);
  });
  return new Blob([bytes.buffer], { type: 'audio/wav' });
}

// Starts recording (the browser asks for the microphone the first time). Resolves to
// {seconds(), stop()}: stop() ends it and resolves to the WAV Blob. When the file would grow past
// `maxBytes`, onLimit() is called (it should stop) and the file is cut there. Rejects with
// getUserMedia's error.
export async function startRecording(maxBytes, onLimit) {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext();
  const release = () => {
    stream.getTracks().forEach((t) => t.stop());
    context.close();
  };
  const maxSamples = Math.floor((maxBytes - 44) / 2);
  const blocks = [];
  let length = 0;
  let stopped = false;
  try {
    await context.audioWorklet.addModule('/web/recorder_worklet.js');
    const node = new AudioWorkletNode(context, 'pcm-capture');
    node.port.onmessage = (e) => {
      if (stopped) return;
      blocks.push(e.data);
      length += e.data.length;
      if (length >= maxSamples) onLimit();
    };
    // Connected to the output (silent: the worklet writes nothing) so the graph pulls it.
    context.createMediaStreamSource(stream).connect(node).connect(context.destination);
    await context.resume();
  } catch (e) {
    release();
    throw e;
  }
  return {
    seconds: () => Math.min(length, maxSamples) / context.sampleRate,
    async stop() {
      if (!stopped) {
        stopped = true;
        release();
      }
      const samples = new Float32Array(Math.min(length, maxSamples));
      let at = 0;
      for (const block of blocks) {
        const n = Math.min(block.length, samples.length - at);
        samples.set(block.subarray(0, n), at);
        at += n;
      }
      return encodeWav(samples, context.sampleRate);
    },
  };
}
