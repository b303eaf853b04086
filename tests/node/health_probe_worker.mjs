// Worker thread of server_load.test.mjs: probes /health on a fresh connection every 50 ms, on
// its own event loop (so the load the main thread drives does not delay the probe's callbacks),
// until the parent posts a message; then posts {latencies} (or {error} on a status other than
// 200 or a failed request).
import { parentPort, workerData } from 'node:worker_threads';
import { request } from './server_http.mjs';

let stopping = false;
parentPort.on('message', () => { stopping = true; });
const latencies = [];
try {
  while (!stopping) {
    const t0 = performance.now();
    const r = await request(workerData.base, '/health', { method: 'GET', agent: false });
    latencies.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  parentPort.postMessage({ latencies });
} catch (e) {
  parentPort.postMessage({ error: e.message });
}
