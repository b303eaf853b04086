// What the suites comparing tandem with llama-server (server_*_llamacpp) share: the chat template
// llama-server is given for the random model, the tokens both requests ban, and the step-by-step
// comparison of greedy tokens and top log-probs.
import assert from 'node:assert/strict';

// The random model's vocabulary (tandem's tiny one) has no chat template; llama-server gets the
// Gemma 4 turn format for one conversation, as tandem renders it (text, then the media marker).
export const GEMMA4_TEMPLATE = `{{- bos_token -}}
{%- for m in messages -%}
<|turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}
{{ m['content'] | trim }}<turn|>
{% endfor -%}
{%- if add_generation_prompt -%}<|turn>model
{% endif -%}`;

// POSTs `body` as JSON and returns the parsed answer, which must be a 200.
export async function post(base, path, body) {
  const r = await fetch(`${base}${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  const text = await r.text();
  assert.equal(r.status, 200, `${base}${path}: ${text}`);
  return JSON.parse(text);
}

// Byte tokens 0x80..0xFF: llama-server answers 500 when the output is not valid UTF-8
// (llama.cpp issue 27543), and a random model emits them freely. Both requests ban them with
// logit_bias; each engine still reports top log-probs from the unbiased logits.
export async function nonUtf8Tokens(base) {
  const ids = [];
  for (let id = 0; ; id++) {
    const r = await fetch(`${base}/detokenize`, { method: 'POST', body: JSON.stringify({ tokens: [id] }) });
    if (r.status !== 200) break;
    if ((await r.json()).content === '\ufffd') ids.push(id);
  }
  return ids;
}

// Greedy steps of a /completion answer with n_probs: [{id, logprob, top: [[id, logprob], ...]}].
export const steps = (probs) => probs.map((p) => ({
  id: p.id, logprob: p.logprob, top: p.top_logprobs.map((q) => [q.id, q.logprob]),
}));

// The same from a chat answer with logprobs, tokens known by their bytes: by its text, every
// lone byte 0x80..0xFF is '\ufffd' in tandem (and '' or '\ufffd' in llama-server), so several
// candidates of one step would share a name.
const chatToken = (c) => JSON.stringify(c.bytes ?? c.token);
export const chatSteps = (r) => r.choices[0].logprobs.content.map((c) => ({
  id: chatToken(c), logprob: c.logprob, top: c.top_logprobs.map((q) => [chatToken(q), q.logprob]),
}));

// Compares step by step and stops at the first step where the engines pick different tokens,
// which must be a near-tie (the two candidates within 2 * tol in tandem's own log-probs): after
// it the sequences differ by design. At every compared step: log-probs of the tokens both list
// within tol, and a candidate whose neighbours in tandem's list (both listed) are more than
// 2 * tol away at the same rank in llama-server's. Returns how many steps agreed, the largest difference and
// the problems found (empty when the engines agree).
export function measureSteps(ours, theirs, tol) {
  let worst = 0;
  let agreed = Math.min(ours.length, theirs.length);
  const problems = [];
  for (let i = 0; i < agreed; i++) {
    const [o, p] = [ours[i], theirs[i]];
    const mine = new Map(o.top);
    const peer = new Map(p.top);
    for (const [id, lp] of o.top) {
      if (!peer.has(id)) continue;
      const d = Math.abs(lp - peer.get(id));
      worst = Math.max(worst, d);
      if (d > tol) problems.push(`step ${i}: token ${id} logprob ${lp} vs llama-server ${peer.get(id)}`);
    }
    o.top.forEach(([id, lp], rank) => {
      // The last listed candidate's lower neighbour is not listed, so it is never clear.
      const clear = (rank === 0 || o.top[rank - 1][1] - lp > 2 * tol)
        && rank < o.top.length - 1 && lp - o.top[rank + 1][1] > 2 * tol;
      if (clear && rank < p.top.length && p.top[rank][0] !== id) {
        problems.push(`step ${i}: rank ${rank} is ${id} in tandem (${JSON.stringify(o.top)}), llama-server ${JSON.stringify(p.top)}`);
      }
    });
    if (o.id !== p.id) {
      const a = mine.get(o.id) ?? o.logprob;
      const b = mine.get(p.id);
      if (b === undefined || Math.abs(a - b) > 2 * tol) {
        problems.push(`step ${i}: tandem picks ${o.id} (${a}), llama-server ${p.id} (tandem's logprob ${b}): not a near-tie`);
      }
      agreed = i;
      break;
    }
    worst = Math.max(worst, Math.abs(o.logprob - p.logprob));
    if (Math.abs(o.logprob - p.logprob) > tol) problems.push(`step ${i}: chosen logprob ${o.logprob} vs ${p.logprob}`);
  }
  return { agreed, worst, problems };
}

// measureSteps, with every problem found in one assertion message naming `where`.
export function compareSteps(ours, theirs, where, tol) {
  const { agreed, worst, problems } = measureSteps(ours, theirs, tol);
  assert.deepEqual(problems, [], `${where}: max |Δlogprob| ${worst.toFixed(4)} (bound ${tol})`);
  return { agreed, worst };
}
