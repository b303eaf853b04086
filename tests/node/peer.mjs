// The peer llama.cpp build (../shared/peer beside the repository, or the folder named by
// TANDEM_PEER_BIN) for the suites that compare tandem with llama-server: whether it runs here,
// and starting llama-server on a free loopback port.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './server_harness.mjs';

export const peerBin = process.env.TANDEM_PEER_BIN
  ?? fileURLToPath(new URL('../../../shared/peer/bin', import.meta.url));

// Whether `run` starts llama-server; returns its error text, or null.
function peerError(run) {
  const r = spawnSync(run, ['llama-server', '--version'], { encoding: 'utf8', timeout: 30000 });
  return r.status === 0 ? null : `${r.stderr}${r.stdout}`.trim() || `exit ${r.status}`;
}

// The peer's `run`, or why it cannot run. A copy of the folder whose library links arrived as
// small files naming their targets (a copy that did not keep symbolic links) gets them back as
// links in a temporary folder.
export function usablePeer() {
  const run = join(peerBin, 'run');
  if (!existsSync(run)) return { why: `${run} is missing` };
  const error = peerError(run);
  if (error === null) return { run };
  const dir = mkdtempSync(join(tmpdir(), 'tandem-peer-'));
  const names = readdirSync(peerBin);
  for (const name of names) {
    const from = join(peerBin, name);
    const target = statSync(from).size < 256 ? readFileSync(from, 'utf8').trim() : '';
    if (target !== '' && names.includes(target)) symlinkSync(target, join(dir, name));
    else copyFileSync(from, join(dir, name));
  }
  const fixed = join(dir, 'run');
  const again = peerError(fixed);
  return again === null ? { run: fixed } : { why: `it does not start: ${error}` };
}

export async function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Starts `run llama-server` with `args` (add -m etc.) on a free port and waits up to 60 s for
// /health. Resolves to { base, stop }; rejects if it does not come up.
export async function startPeerServer(run, args, env = {}) {
  const port = await freePort();
  const proc = spawn(run, ['llama-server', '--port', String(port), ...args],
    { stdio: 'ignore', env: { ...process.env, ...env } });
  const base = `http://127.0.0.1:${port}`;
  const stop = () => proc.kill('SIGKILL');
  const up = await waitFor(async () => {
    try {
      return (await fetch(`${base}/health`)).status === 200;
    } catch {
      return false;
    }
  }, 60000, 200);
  if (!up) {
    stop();
    throw new Error(`llama-server ${args.join(' ')} did not come up in 60 s`);
  }
  return { base, stop };
}
