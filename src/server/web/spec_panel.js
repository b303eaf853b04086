// The speculation panel: one request's statistics, live while it streams (from the `timings`
// that chunks carry) and final at the end, with two small SVG charts: acceptance by draft
// position, and the draft length the controller chose each round with how much of it was
// accepted.

const SVG = 'http://www.w3.org/2000/svg';
const ROUNDS_SHOWN = 60;

function $(id) {
  return document.getElementById(id);
}

function svgEl(name, attrs, text) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

const fmt = {
  int: (n) => (n === undefined || n === null ? '–' : String(Math.round(n))),
  fixed: (n, d = 2) => (n === undefined || n === null || !isFinite(n) ? '–' : n.toFixed(d)),
  pct: (x) => (x === undefined || x === null || !isFinite(x) ? '–' : `${(100 * x).toFixed(0)}%`),
};

// A request as the panel sees it. `spec` is what the page asked for ({enabled, draft_max}) and
// `props` the server's /props when it was sent.
export function newRecord(spec, props) {
  return {
    spec,
    props,
    started: performance.now(),
    firstToken: null,
    ended: null,
    stats: null,       // latest timings.speculative (live or final)
    predicted: 0,      // tokens generated so far
    rounds: [],        // [drafted, accepted] per round
    final: null,       // the last chunk's timings
    error: null,
  };
}

// Folds one chunk's `timings` (live or final) into the record.
export function addTimings(record, timings, isFinal) {
  if (!timings) return;
  if (timings.speculative) {
    record.stats = timings.speculative;
    for (const r of timings.speculative.draft_rounds || []) record.rounds.push(r);
  }
  if (typeof timings.predicted_n === 'number') record.predicted = timings.predicted_n;
  if (isFinal) {
    record.final = timings;
    record.ended = performance.now();
  }
}

export function tokensPerSecond(record) {
  if (record.final && record.final.predicted_per_second) return record.final.predicted_per_second;
  if (record.firstToken === null || record.predicted < 2) return null;
  const seconds = (performance.now() - record.firstToken) / 1000;
  return seconds > 0 ? (record.predicted - 1) / seconds : null;
}

// The status line: what speculation did for this request, and why not when it did not.
export function statusOf(record) {
  const props = record.props;
  const running = record.final === null && record.error === null;
  if (props && !props.assistant) {
    return { off: true, text: 'No assistant loaded: plain decoding (start the server with -md FILE).' };
  }
  if (!record.spec.enabled) {
    return { off: true, text: 'Speculation off for this request (turned off in the page): plain decoding.' };
  }
  if (record.spec.draft_max === 0) {
    return { off: true, text: 'Speculation off for this request: draft max is 0.' };
  }
  const s = record.stats;
  if (s && s.enabled === false) {
    const why = props && props.speculative && props.speculative.inactive_reason;
    return { off: true, text: `Speculation inactive${why ? `: ${why}` : ''}.` };
  }
  const draftMax = (s && s.draft_max) || record.spec.draft_max || (props && props.speculative.draft_max);
  const label = `MTP speculation on, draft max ${draftMax}`;
  if (running) return { off: false, text: `${label} · generating…` };
  if (record.error) {
    return { off: false, text: `${label} · ${record.error === 'stopped' ? 'stopped' : `failed: ${record.error}`}.` };
  }
  if (s && s.drafted === 0) {
    const adaptive = props && props.speculative.adaptive;
    return {
      off: true,
      text:
        'The assistant is loaded and speculation was on, but nothing was drafted: ' +
        (adaptive
          ? 'the adaptive draft-length controller chose plain decoding (drafting looked slower than it would save), or the answer was too short to draft.'
          : 'the answer was too short to draft.'),
    };
  }
  return { off: false, text: `${label} · done.` };
}

// The charts before the first request.
export function renderEmptyPanel() {
  drawPositions($('chart-position'), []);
  drawRounds($('chart-rounds'), [], 0);
}

export function renderPanel(record) {
  const status = statusOf(record);
  const el = $('spec-status');
  el.textContent = status.text;
  el.classList.toggle('off', status.off);
  const s = record.stats || {};
  $('m-tps').textContent = fmt.fixed(tokensPerSecond(record), 1);
  $('m-drafted').textContent = fmt.int(s.drafted);
  $('m-accepted').textContent = fmt.int(s.accepted);
  $('m-rate').textContent = s.drafted ? fmt.pct(s.acceptance_rate) : '–';
  $('m-tpf').textContent = fmt.fixed(s.tokens_per_target_forward);
  $('m-rounds').textContent = record.stats ? `${fmt.int(s.rounds)} · ${fmt.int(s.plain_steps)}` : '–';
  $('m-rep').textContent = s.accepted ? fmt.pct(s.repetition_share) : '–';
  $('m-sources').textContent = s.drafted ? sourcesLine(s.by_source || {}) : '–';
  $('m-probes').textContent = fmt.int(s.probes);
  const speedup = speedupOf(s);
  $('m-speedup').textContent = speedup.text;
  $('m-speedup').title = speedup.title;
  drawPositions($('chart-position'), s.acceptance_by_position || []);
  drawRounds($('chart-rounds'), record.rounds, s.draft_max || 0);
}

// The estimated speedup over plain decoding. It needs a plain-step baseline: a run that drafted
// and timed fewer plain steps than the server's minimum says so (the server's upper bound in the
// tooltip), never a bare figure that one odd plain step produced. The panel checks the counts
// itself as well as the server's flag.
export function speedupOf(s) {
  const min = s.speedup_baseline_min_plain_steps ?? 8;
  const noBaseline = s.rounds > 0 && ((s.plain_steps || 0) < min || s.speedup_estimate_is_upper_bound);
  if (!s.speedup_estimate) return { text: '–', title: '' };
  if (noBaseline) {
    // The bound only in the tooltip: a multi-row verification can cost several plain steps, so
    // the bound can sit far above the truth.
    const bound = s.speedup_estimate_is_upper_bound
      ? ` At most ${fmt.fixed(s.speedup_estimate)}×, with a verification forward standing in for a plain step.`
      : '';
    return {
      text: 'needs a plain-step baseline',
      title: `${fmt.int(s.plain_steps || 0)} of the ${min} plain steps an estimate needs were timed.${bound}`,
    };
  }
  return {
    text: `${fmt.fixed(s.speedup_estimate)}×`,
    title: 'Tokens emitted times the cost of a plain step, over the time spent drafting and verifying.',
  };
}

// Acceptance by draft source (prompt lookup "ngram", the assistant "model", ...): the sources
// that drafted, as "ngram 148/149 (99%)".
function sourcesLine(bySource) {
  return Object.entries(bySource)
    .filter(([, src]) => src.drafted > 0)
    .map(([name, src]) => `${name} ${fmt.int(src.accepted)}/${fmt.int(src.drafted)} (${fmt.pct(src.acceptance_rate)})`)
    .join(' · ') || '–';
}

function drawPositions(svg, rates) {
  svg.replaceChildren();
  const W = 300, H = 110, left = 28, bottom = 16, top = 6;
  const h = H - bottom - top;
  for (const y of [0, 0.5, 1]) {
    const yy = top + h * (1 - y);
    svg.append(svgEl('line', { x1: left, x2: W, y1: yy, y2: yy, class: 'axis' }));
    svg.append(svgEl('text', { x: 2, y: yy + 3 }, `${y * 100}%`));
  }
  if (rates.length === 0) {
    svg.append(svgEl('text', { x: left + 8, y: top + h * 0.3 }, 'no drafts'));
    svg.setAttribute('aria-label', 'Acceptance by draft position: no data');
    return;
  }
  const slot = (W - left) / rates.length;
  const bar = Math.min(28, slot * 0.7);
  rates.forEach((r, i) => {
    const x = left + i * slot + (slot - bar) / 2;
    const bh = Math.max(0, h * r);
    const rect = svgEl('rect', { x, y: top + h - bh, width: bar, height: bh, class: 'accepted' });
    rect.append(svgEl('title', {}, `position ${i + 1}: ${(100 * r).toFixed(0)}% accepted`));
    svg.append(rect);
    if (rates.length <= 16 || i % 2 === 0) {
      svg.append(svgEl('text', { x: x + bar / 2 - 3, y: H - 4 }, i + 1));
    }
  });
  svg.setAttribute(
    'aria-label',
    'Acceptance by draft position: ' + rates.map((r, i) => `${i + 1}: ${(100 * r).toFixed(0)}%`).join(', '),
  );
}

function drawRounds(svg, rounds, draftMax) {
  svg.replaceChildren();
  const W = 300, H = 90, left = 20, bottom = 4, top = 6;
  const h = H - bottom - top;
  const shown = rounds.slice(-ROUNDS_SHOWN);
  const max = Math.max(1, draftMax, ...shown.map((r) => r[0]));
  for (const y of [0, max]) {
    const yy = top + h * (1 - y / max);
    svg.append(svgEl('line', { x1: left, x2: W, y1: yy, y2: yy, class: 'axis' }));
    svg.append(svgEl('text', { x: 2, y: yy + 3 }, y));
  }
  if (shown.length === 0) {
    svg.append(svgEl('text', { x: left + 8, y: top + h * 0.3 }, 'no drafting rounds'));
    svg.setAttribute('aria-label', 'Draft length per round: no data');
    return;
  }
  // Wide bars for a few rounds; the last ROUNDS_SHOWN once there are more.
  const slot = (W - left) / Math.max(20, shown.length);
  shown.forEach(([drafted, accepted], i) => {
    const x = left + i * slot + slot * 0.1;
    const w = slot * 0.8;
    const dh = (h * drafted) / max;
    const ah = (h * accepted) / max;
    const g = svgEl('g', {});
    g.append(svgEl('rect', { x, y: top + h - dh, width: w, height: dh, class: 'drafted' }));
    g.append(svgEl('rect', { x, y: top + h - ah, width: w, height: ah, class: 'accepted' }));
    g.append(svgEl('title', {}, `round ${rounds.length - shown.length + i + 1}: drafted ${drafted}, accepted ${accepted}`));
    svg.append(g);
  });
  const mean = shown.reduce((s, r) => s + r[0], 0) / shown.length;
  svg.setAttribute(
    'aria-label',
    `Draft length per round: ${rounds.length} rounds, the last ${shown.length} drafting ${mean.toFixed(1)} tokens on average`,
  );
}

// Speed with and without drafting as this page measured it (the latest finished request of
// each kind), or '' until both ran: the estimate above is a model, this is the clock.
export function comparisonLine(records) {
  const done = records.filter((r) => r.final && r.final.predicted_per_second > 0);
  const on = done.filter((r) => r.stats && r.stats.drafted > 0).pop();
  const off = done.filter((r) => r.stats && r.stats.drafted === 0 && r.stats.rounds === 0).pop();
  if (!on || !off) return '';
  const a = on.final.predicted_per_second, b = off.final.predicted_per_second;
  return `Measured here: ${a.toFixed(1)} tok/s drafting vs ${b.toFixed(1)} tok/s plain ` +
    `(${(a / b).toFixed(2)}×; one request each, other load on the machine counts).`;
}

// One line for the message footer.
export function summaryLine(record) {
  const s = record.stats || {};
  const parts = [`${fmt.int(record.predicted)} tokens`];
  const tps = tokensPerSecond(record);
  if (tps) parts.push(`${fmt.fixed(tps, 1)} tok/s`);
  if (s.drafted) {
    parts.push(`acceptance ${fmt.pct(s.acceptance_rate)}`);
    parts.push(`${fmt.fixed(s.tokens_per_target_forward)} tok/forward`);
  } else if (!record.spec.enabled) {
    parts.push('speculation off');
  }
  return parts.join(' · ');
}
