// Minimal HTTP client for the server suites (node:http, so tests control sockets: keep-alive
// per simulated connection, mid-stream disconnects). Every call is bounded by a timeout.
import http from 'node:http';

// Reads a response to its end; resolves {status, headers, text, json} (json undefined when the
// body is not JSON).
export function readResponse(res) {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c) => { text += c; });
    res.on('end', () => {
      let json;
      try { json = JSON.parse(text); } catch { json = undefined; }
      resolve({ status: res.statusCode, headers: res.headers, text, json });
    });
    res.on('error', reject);
  });
}

// POST/GET `path` with `body` (string or object); resolves {status, headers, text, json}.
export function request(base, path, { method = 'POST', body, headers = {}, agent, timeoutMs = 30000 } = {}) {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method, agent,
      headers: { 'content-type': 'application/json',
                 ...(payload !== undefined ? { 'content-length': Buffer.byteLength(payload) } : {}),
                 ...headers },
    }, (res) => readResponse(res).then(resolve, reject));
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${path}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

// Starts a streamed request, waits for the first body bytes, then destroys the socket.
// Resolves to the status code seen.
export function disconnectAfterFirstChunk(base, path, body, { timeoutMs = 30000 } = {}) {
  const url = new URL(path, base);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve(res.statusCode);
      });
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => {});
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
    req.end(payload);
  });
}

// Concatenated content of an OpenAI SSE chat stream; checks it ends with [DONE].
export function openAiStreamContent(text) {
  const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
  if (events.at(-1) !== 'data: [DONE]') throw new Error(`stream does not end with [DONE]: ${text.slice(-200)}`);
  let content = '';
  for (const e of events.slice(0, -1)) {
    const chunk = JSON.parse(e.slice(6));
    if (chunk.error) throw new Error(`stream error: ${JSON.stringify(chunk.error)}`);
    content += chunk.choices[0]?.delta?.content ?? '';
  }
  return content;
}
