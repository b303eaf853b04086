// The audio-thread half of recorder.js: posts each block of microphone samples, mixed to mono,
// to the page. Loaded with audioWorklet.addModule (a worklet scope, not a page module).
class PcmCapture extends AudioWorkletProcessor {
  process(inputs) {
    const channels = inputs[0];
    if (channels.length > 0) {
      const mono = new Float32Array(channels[0].length);
      for (const channel of channels) {
        for (let i = 0; i < mono.length; i++) mono[i] += channel[i] / channels.length;
      }
      this.port.postMessage(mono, [mono.buffer]);
    }
    return true;
  }
}

registerProcessor('pcm-capture', PcmCapture);
