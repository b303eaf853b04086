// Talking to the server this page came from: the API key (kept in localStorage), JSON GETs and
// a streamed chat completion read as server-sent events.

const KEY_STORAGE = 'tandem.apiKey';

export function apiKey() {
  try {
    return localStorage.getItem(KEY_STORAGE) || '';
  } catch {
    return '';  // storage disabled: the key lives only as long as the page
  }
}

export function setApiKey(key) {
  try {
    if (key) localStorage.setItem(KEY_STORAGE, key);
    else localStorage.removeItem(KEY_STORAGE);
  } catch {
    /* storage disabled */
  }
}

function headers(extra = {}) {
  const h = { ...extra };
  const key = apiKey();
  if (key) h.Authorization = `Bearer ${key}`;
  return h;
}

// An error with the HTTP status and the server's message.
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function errorFrom(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error) message = body.error.message || JSON.stringify(body.error);
  } catch {
    /* not JSON */
  }
  return new ApiError(response.status, message);
}

export async function getJson(path) {
  const response = await fetch(path, { headers: headers(), cache: 'no-store' });
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

// POSTs `body` to /v1/chat/completions with stream: true and calls onChunk(chunk) for every
// JSON chunk until [DONE]. `signal` aborts it (the server then stops generating).
export async function streamChat(body, onChunk, signal) {
  const response = await fetch('/v1/chat/completions', {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json' }),
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    signal,
  });
  if (!response.ok) throw await errorFrom(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data === '') continue;  // a comment (keep-alive)
      if (data === '[DONE]') return;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new ApiError(500, chunk.error.message || 'generation failed');
      onChunk(chunk);
    }
  }
}
