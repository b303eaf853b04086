// Starts and stops `tandem serve` for the node test suites: a free loopback port chosen by the
// server (--port 0), the tiny generated target + assistant named by the environment, bounded
// waits. TANDEM_BIN, TANDEM_MODEL and TANDEM_ASSISTANT come from ctest (tests/server).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const env = {
  bin: process.env.TANDEM_BIN,
  model: process.env.TANDEM_MODEL,
  assistant: process.env.TANDEM_ASSISTANT,
};

// Why the suites cannot run here, or null.
export function skipReason() {
  if (!env.bin || !env.model || !env.assistant) {
    return 'TANDEM_BIN, TANDEM_MODEL and TANDEM_ASSISTANT are not set (run through ctest)';
  }
  return null;
}

export const MODEL_ID = () => env.model.split('/').pop();

// Starts the server with `args` added to -m/-md/--port 0 and resolves once it is ready and
// /health answers 200. Rejects after `timeoutMs`. `draft`: the -md file (default the assistant);
// `model`: the -m file (default TANDEM_MODEL).
export async function startServer(args = [],
  { timeoutMs = 60000, draft = env.assistant, model = env.model } = {}) {
  const ctx = args.includes('-c') ? [] : ['-c', '1024'];  // a test may set its own context
  const argv = ['serve', '-m', model, '-md', draft, '--port', '0', ...ctx, '-t', '2', ...args];
  const proc = spawn(env.bin, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server not ready in ${timeoutMs} ms:\n${stderr}`)), timeoutMs);
    proc.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const m = stderr.match(/ready on http:\/\/[^\s:]+:(\d+)/);  // --host may be another address
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stderr}`));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const health = await fetch(`${base}/health`);
  if (health.status !== 200) throw new Error(`/health answered ${health.status}`);
  return {
    proc,
    port,
    base,
    exited,
    stderr: () => stderr,
    // SIGTERM, then SIGKILL if it has not exited after `graceMs`. Resolves to the exit status.
    async stop(graceMs = 15000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return exited;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const status = await exited;
      clearTimeout(timer);
      return status;
    },
  };
}

// Resident set size of process `pid` in bytes (Linux).
export function residentBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = status.match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) * 1024 : 0;
}

// The value of metric `name` (with `labels` text such as 'status="200"', or none) in the
// server's /metrics, or undefined.
export async function metric(base, name, labels = '', headers = {}) {
  const text = await (await fetch(`${base}/metrics`, { headers })).text();
  const key = labels ? `tandem_${name}{${labels}} ` : `tandem_${name} `;
  const line = text.split('\n').find((l) => l.startsWith(key));
  return line === undefined ? undefined : Number(line.slice(key.length));
}

// Polls `fn` until it returns true or `timeoutMs` passes; returns the last result.
export async function waitFor(fn, timeoutMs = 10000, stepMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
