// The chat page: conversation (stream, stop, regenerate, edit and resend), request settings,
// server state from /props, and the speculation panel (spec_panel.js). The images and recordings
// of the next message are composer_media.js's.
import { ApiError, apiKey, getJson, setApiKey, streamChat } from './api.js';
import { messageContent, messageImages, renderThumbnails } from './attachments.js';
import { audioPart, messageAudio, renderClips } from './audio.js';
import { renderPending, setupComposerMedia, updateAttachControls } from './composer_media.js';
import { renderMarkdown, escapeHtml } from './markdown.js';
import {
  addTimings, comparisonLine, newRecord, renderEmptyPanel, renderPanel, statusOf, summaryLine,
} from './spec_panel.js';

const $ = (id) => document.getElementById(id);

const state = {
  messages: [],     // {role, content, images, audio, reasoning, toolCalls, record, error, stopped}
  pending: [],      // images to send with the next message ({name, type, size, url})
  pendingAudio: [], // recordings to send with the next message ({name, format, size, url})
  recorder: null,   // the microphone recording under way (recorder.js); {} while it starts
  recordings: 0,    // recordings made on this page, for their names
  controller: null, // AbortController of the running request
  props: null,      // the last /props
  keyNeeded: false,
};

// ---- server state -------------------------------------------------------------------------

async function refreshProps() {
  try {
    const props = await getJson('/props');
    state.props = props;
    state.keyNeeded = false;
    $('state-model').textContent = props.model;
    $('state-assistant').textContent = props.assistant || 'none';
    $('state-slots').textContent = `${props.slots_busy} / ${props.total_slots}`;
    $('state-queue').textContent = String(props.queue_depth);
    updateWarning();
    updateSpecControls();
    updateAttachControls();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      state.keyNeeded = true;
      $('state-model').textContent = 'API key needed';
      showKeyForm(apiKey() ? 'The saved API key was refused; enter the right one.' : 'This server needs an API key.');
    } else if (e instanceof ApiError && e.status === 503) {
      $('state-model').textContent = 'loading…';
    } else {
      $('state-model').textContent = 'unreachable';
    }
  }
}

function schedulePropsRefresh() {
  const busy = state.controller !== null;
  setTimeout(async () => {
    await refreshProps();
    schedulePropsRefresh();
  }, busy ? 1000 : 3000);
}

function updateSpecControls() {
  const hasAssistant = Boolean(state.props && state.props.assistant);
  $('spec-enabled').disabled = !hasAssistant;
  $('spec-draft-max').disabled = !hasAssistant;
  if (state.props && !$('spec-draft-max').placeholder) {
    $('spec-draft-max').placeholder = `server: ${state.props.speculative.draft_max}`;
  }
}

// The warning under the header: the assistant is loaded but speculation is inactive, for the
// whole server or for the last request, and why.
function updateWarning() {
  const el = $('spec-warning');
  const props = state.props;
  let text = '';
  if (props && props.assistant && !props.speculative.active) {
    text = `The assistant ${props.assistant} is loaded but speculation is inactive: ${props.speculative.inactive_reason}.`;
  } else {
    const last = [...state.messages].reverse().find((m) => m.record);
    if (props && props.assistant && last) {
      const status = statusOf(last.record);
      if (status.off) text = `The assistant is loaded but speculation was inactive for the last request. ${status.text}`;
    }
  }
  el.textContent = text;
  el.hidden = text === '';
}

// ---- API key ------------------------------------------------------------------------------

function showKeyForm(message) {
  const form = $('key-form');
  const wasHidden = form.hidden;
  form.hidden = false;
  $('key-message').textContent = message || '';
  if (wasHidden) $('key-input').focus();
}

function setupKeyForm() {
  $('key-button').addEventListener('click', () => {
    const form = $('key-form');
    if (form.hidden) showKeyForm(apiKey() ? 'A key is saved; enter a new one to replace it.' : '');
    else form.hidden = true;
  });
  $('key-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    setApiKey($('key-input').value.trim());
    $('key-input').value = '';
    await refreshProps();
    if (!state.keyNeeded) {
      $('key-form').hidden = true;
      setStatus('API key saved.');
      $('composer-input').focus();
    }
  });
  $('key-forget').addEventListener('click', () => {
    setApiKey('');
    $('key-message').textContent = 'The key is forgotten.';
  });
}

// ---- conversation -------------------------------------------------------------------------

function setStatus(text, isError = false) {
  const el = $('chat-status');
  el.textContent = text;
  el.classList.toggle('error', isError);
}

function button(label, onClick, extraClass = '') {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `ghost small ${extraClass}`.trim();
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}

function messageBody(m) {
  const parts = [];
  if (m.reasoning) {
    parts.push(
      `<details class="thought"${m.thoughtOpen ? ' open' : ''}><summary>Thoughts (${m.reasoning.length} characters)</summary>` +
        `<pre>${escapeHtml(m.reasoning)}</pre></details>`,
    );
  }
  if (m.role === 'user') {
    if (m.content) parts.push(`<p>${escapeHtml(m.content).replace(/\n/g, '<br>')}</p>`);
  } else {
    parts.push(renderMarkdown(m.content));
  }
  for (const call of m.toolCalls || []) {
    parts.push(
      `<div class="tool-call"><strong>tool call</strong> <code>${escapeHtml(call.name)}</code>` +
        `<pre><code>${escapeHtml(call.arguments)}</code></pre></div>`,
    );
  }
  if (m.error) parts.push(`<p class="error-text">${escapeHtml(m.error)}</p>`);
  return parts.join('');
}

function renderMessage(m, index) {
  const li = document.createElement('li');
  li.className = `msg ${m.role}${m.error ? ' error' : ''}`;
  li.dataset.index = String(index);
  const head = document.createElement('div');
  head.className = 'msg-head';
  const role = document.createElement('span');
  role.className = 'role';
  role.textContent = m.role === 'user' ? 'you' : 'assistant';
  head.append(role);
  const tools = document.createElement('span');
  tools.className = 'tools';
  if (m.role === 'user' && !m.editing) {
    tools.append(button('Edit', () => startEdit(index), 'edit'));
  }
  if (m.role === 'assistant' && m.record && m.record !== state.shown) {
    tools.append(button('Show stats', () => showRecord(m.record)));
  }
  head.append(tools);
  li.append(head);

  if (m.editing) {
    const label = document.createElement('label');
    label.className = 'visually-hidden';
    label.htmlFor = `edit-${index}`;
    label.textContent = 'Edit the message';
    const area = document.createElement('textarea');
    area.id = `edit-${index}`;
    area.rows = 3;
    area.value = m.content;
    area.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        finishEdit(index, area.value);
      } else if (e.key === 'Escape') {
        m.editing = false;
        renderLog();
      }
    });
    const row = document.createElement('div');
    row.className = 'composer-buttons';
    const send = button('Send edited', () => finishEdit(index, area.value));
    send.classList.remove('ghost');
    row.append(send, button('Cancel', () => { m.editing = false; renderLog(); }));
    li.append(label, area);
    if (m.draftAudio.length) {
      // The message's recordings go with the edited text; × drops one.
      const clips = document.createElement('ul');
      clips.className = 'attachments clips';
      clips.setAttribute('aria-label', 'Recordings sent with the edited message');
      const redraw = () => renderClips(clips, m.draftAudio, (i) => {
        m.draftAudio.splice(i, 1);
        redraw();
        area.focus();
      });
      redraw();
      li.append(clips);
    }
    if (m.draftImages.length) {
      // The message's images go with the edited text; × drops one.
      const strip = document.createElement('ul');
      strip.className = 'attachments';
      strip.setAttribute('aria-label', 'Images sent with the edited message');
      const redraw = () => renderThumbnails(strip, m.draftImages, (i) => {
        m.draftImages.splice(i, 1);
        redraw();
        area.focus();
      });
      redraw();
      li.append(strip);
    }
    li.append(row);
    return li;
  }

  const body = document.createElement('div');
  body.className = 'msg-body';
  const streaming = m.role === 'assistant' && m.record && m.record === state.running;
  body.innerHTML = messageBody(m);
  // The log is redrawn as tokens arrive: an opened thought stays open.
  const thought = body.querySelector('details.thought');
  if (thought) thought.addEventListener('toggle', () => (m.thoughtOpen = thought.open));
  if (streaming) body.classList.add('cursor');
  li.append(body);
  if (m.images && m.images.length) li.append(messageImages(m.images));
  if (m.audio && m.audio.length) li.append(messageAudio(m.audio));
  if (m.record) {
    const foot = document.createElement('div');
    foot.className = 'msg-foot';
    foot.textContent = summaryLine(m.record) + (m.stopped ? ' · stopped' : '');
    li.append(foot);
  }
  return li;
}

function renderLog() {
  const log = $('log');
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  log.replaceChildren(...state.messages.map(renderMessage));
  $('empty-hint').hidden = state.messages.length > 0;
  if (atBottom) log.scrollTop = log.scrollHeight;
  const busy = state.controller !== null;
  $('send-button').disabled = busy;
  $('stop-button').disabled = !busy;
  const last = state.messages[state.messages.length - 1];
  $('regenerate-button').disabled = busy || !last || (last.role !== 'assistant' && last.role !== 'user');
}

// Redraws the streaming message at most once a frame.
let frameQueued = false;
function renderSoon() {
  if (frameQueued) return;
  frameQueued = true;
  requestAnimationFrame(() => {
    frameQueued = false;
    renderLog();
    if (state.shown) renderPanel(state.shown);
  });
}

function showRecord(record) {
  state.shown = record;
  renderPanel(record);
  renderLog();
}

function startEdit(index) {
  if (state.controller) return;
  state.messages.forEach((m) => (m.editing = false));
  const m = state.messages[index];
  m.editing = true;
  m.draftImages = [...(m.images || [])];
  m.draftAudio = [...(m.audio || [])];
  renderLog();
  const area = $(`edit-${index}`);
  area.focus();
  area.setSelectionRange(area.value.length, area.value.length);
}

function finishEdit(index, text) {
  const { draftImages: images, draftAudio: audio } = state.messages[index];
  if (text.trim() === '' && images.length === 0 && audio.length === 0) return;
  const before = state.messages;
  state.messages = [...before.slice(0, index), { role: 'user', content: text, images, audio }];
  if (!generate()) state.messages = before;  // still editing
}

// ---- the request --------------------------------------------------------------------------

function numberField(id, integer) {
  const raw = $(id).value.trim();
  if (raw === '') return undefined;
  const n = Number(raw);
  if (!isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new Error(`${$(id).labels[0].textContent}: "${raw}" is not ${integer ? 'an integer' : 'a number'}`);
  }
  return n;
}

function buildRequest() {
  const body = { messages: [] };
  const system = $('system-prompt').value.trim();
  if (system) body.messages.push({ role: 'system', content: system });
  for (const m of state.messages) {
    if (m.role === 'user') {
      const audio = (m.audio || []).map(audioPart);
      body.messages.push({ role: 'user', content: messageContent(m.content, m.images, audio) });
    } else if (m.role === 'assistant' && !m.error) body.messages.push({ role: 'assistant', content: m.content });
  }
  const fields = [
    ['temperature', 's-temperature', false],
    ['top_p', 's-top-p', false],
    ['top_k', 's-top-k', true],
    ['min_p', 's-min-p', false],
    ['max_tokens', 's-max-tokens', true],
    ['seed', 's-seed', true],
  ];
  for (const [name, id, integer] of fields) {
    const v = numberField(id, integer);
    if (v !== undefined) body[name] = v;
  }
  body.chat_template_kwargs = { enable_thinking: $('thinking').checked };
  const tools = jsonSetting('tools-json', 'tools-error', 'Tools', 'the tool definitions',
    Array.isArray, 'a JSON array of tool definitions');
  if (tools && tools.length) body.tools = tools;
  const schema = jsonSetting('schema-json', 'schema-error', 'Schema', 'the answer schema',
    (v) => v !== null && typeof v === 'object' && !Array.isArray(v), 'a JSON Schema object');
  if (schema) body.response_format = { type: 'json_schema', json_schema: { name: 'answer', schema } };
  const spec = { enabled: $('spec-enabled').checked, draft_max: numberField('spec-draft-max', true) };
  if (state.props && state.props.assistant) {
    body.speculative = spec.enabled ? { enabled: true } : { enabled: false };
    if (spec.enabled && spec.draft_max !== undefined) body.speculative.draft_max = spec.draft_max;
  }
  return { body, spec };
}

// The JSON value of settings textarea `id` (undefined when empty). Bad JSON, or a value `ok`
// refuses, is shown in `errorId` and throws.
function jsonSetting(id, errorId, label, what, ok, expected) {
  $(errorId).textContent = '';
  const text = $(id).value.trim();
  if (!text) return undefined;
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    $(errorId).textContent = `${label}: not valid JSON (${e.message})`;
    throw new Error(`${what} are not valid JSON`);
  }
  if (!ok(value)) {
    $(errorId).textContent = `${label}: expected ${expected}`;
    throw new Error(`${what} must be ${expected}`);
  }
  return value;
}

// Answers the conversation as it stands. Returns false, changing nothing, when the settings are
// invalid (the status line says why).
function generate() {
  let request;
  try {
    request = buildRequest();
  } catch (e) {
    setStatus(e.message, true);
    return false;
  }
  run(request);
  return true;
}

async function run(request) {
  const record = newRecord(request.spec, state.props);
  const reply = { role: 'assistant', content: '', reasoning: '', toolCalls: [], record };
  state.messages.push(reply);
  state.controller = new AbortController();
  state.running = record;
  state.shown = record;
  setStatus('Generating…');
  renderLog();
  renderPanel(record);
  try {
    await streamChat(
      request.body,
      (chunk) => {
        const choice = chunk.choices && chunk.choices[0];
        const delta = (choice && choice.delta) || {};
        if (delta.content) reply.content += delta.content;
        if (delta.reasoning_content) reply.reasoning += delta.reasoning_content;
        for (const call of delta.tool_calls || []) {
          reply.toolCalls.push({ name: call.function.name, arguments: call.function.arguments });
        }
        if ((delta.content || delta.reasoning_content || delta.tool_calls) && record.firstToken === null) {
          record.firstToken = performance.now();
        }
        addTimings(record, chunk.timings, Boolean(choice && choice.finish_reason));
        renderSoon();
      },
      state.controller.signal,
    );
    setStatus(reply.content || reply.toolCalls.length ? 'Done.' : 'Done (the reply is empty).');
  } catch (e) {
    if (e.name === 'AbortError') {
      reply.stopped = true;
      record.error = 'stopped';
      setStatus('Stopped.');
    } else {
      reply.error = e.message;
      record.error = e.message;
      setStatus(`Error: ${e.message}`, true);
      if (e instanceof ApiError && e.status === 401) showKeyForm('The server refused the API key; enter the right one.');
    }
  } finally {
    state.controller = null;
    state.running = null;
    renderLog();
    renderPanel(record);
    $('spec-compare').textContent = comparisonLine(state.messages.map((m) => m.record).filter(Boolean));
    updateWarning();
    refreshProps();
  }
}

function send() {
  const input = $('composer-input');
  const text = input.value;
  const nothing = text.trim() === '' && state.pending.length === 0 && state.pendingAudio.length === 0;
  if (nothing || state.controller) return;
  state.messages.forEach((m) => (m.editing = false));
  state.messages.push({ role: 'user', content: text, images: state.pending, audio: state.pendingAudio });
  if (generate()) {
    input.value = '';
    state.pending = [];
    state.pendingAudio = [];
    renderPending();
  } else {
    state.messages.pop();  // the text, images and recordings stay in the box
  }
}

function setupComposer() {
  const input = $('composer-input');
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    send();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && state.controller) state.controller.abort();
  });
  $('stop-button').addEventListener('click', () => state.controller && state.controller.abort());
  $('regenerate-button').addEventListener('click', () => {
    if (state.controller) return;
    const last = state.messages[state.messages.length - 1];
    if (!last) return;
    const before = state.messages;
    if (last.role === 'assistant') state.messages = before.slice(0, -1);
    if (!state.messages.length || !generate()) state.messages = before;
  });
  $('clear-button').addEventListener('click', () => {
    if (state.controller) state.controller.abort();
    state.messages = [];
    setStatus('');
    renderLog();
    input.focus();
  });
}

setupKeyForm();
setupComposer();
setupComposerMedia({ state, setStatus });
renderLog();
renderEmptyPanel();
refreshProps().then(schedulePropsRefresh);
