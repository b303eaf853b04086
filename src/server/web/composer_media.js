// The files sent with the next message: images when the server has vision (attachments.js) and
// recordings when it has audio (audio.js), picked, pasted, dropped or recorded from the
// microphone (recorder.js); their previews, and the controls that add them, enabled by what
// /props says is loaded. app.js hands over the page's state and status line
// (setupComposerMedia).
import { ACCEPTED, MAX_IMAGE_BYTES, readImages, renderThumbnails } from './attachments.js';
import {
  ACCEPTED_AUDIO, MAX_AUDIO_BYTES, formatDuration, isAudioFile, readAudioFiles, renderClips,
} from './audio.js';
import { recordingError, recordingUnavailable, startRecording } from './recorder.js';

const $ = (id) => document.getElementById(id);

// The page's state (app.js: props, pending, pendingAudio, recorder, recordings) and its status
// line, set by setupComposerMedia.
let state = null;
let setStatus = () => {};

// Images can be attached only when /props says a vision projector is loaded (llama-server's
// `modalities`; a server without the field has none).
function visionLoaded() {
  const modalities = state.props && state.props.modalities;
  return Boolean(modalities && modalities.vision === true);
}

// Recordings only when it says an audio tower is loaded; their controls are hidden otherwise.
function audioLoaded() {
  const modalities = state.props && state.props.modalities;
  return Boolean(modalities && modalities.audio === true);
}

const NO_VISION = 'start the server with --mmproj to send images';
const NO_AUDIO = 'start the server with -mm FILE, an mmproj holding an audio tower';

export function updateAttachControls() {
  const b = $('attach-button');
  b.disabled = !visionLoaded();
  b.title = b.disabled
    ? NO_VISION
    : `Attach ${ACCEPTED} images (up to ${MAX_IMAGE_BYTES / (1024 * 1024)} MB each); you can also paste or drop them on the message box`;
  const audio = audioLoaded();
  $('audio-button').hidden = !audio;
  $('audio-button').title = `Attach ${ACCEPTED_AUDIO} recordings (up to ${MAX_AUDIO_BYTES / (1024 * 1024)} MB each); you can also drop them on the message box`;
  const record = $('record-button');
  record.hidden = !audio && !state.recorder;  // a recording under way can still be stopped
  // Where the browser offers no microphone the button stays pressable and says why.
  const unavailable = recordingUnavailable();
  record.setAttribute('aria-disabled', String(unavailable !== ''));
  if (!state.recorder) record.title = unavailable ? `Cannot record: ${unavailable}` : 'Record from the microphone; press again to stop and attach it';
}

// ---- images for the next message ------------------------------------------------------------

export function renderPending() {
  renderThumbnails($('attachments'), state.pending, (i) => {
    state.pending.splice(i, 1);
    renderPending();
    $('composer-input').focus();
  });
  renderClips($('audio-attachments'), state.pendingAudio, (i) => {
    state.pendingAudio.splice(i, 1);
    renderPending();
    $('composer-input').focus();
  });
  // An image or a recording alone is a message.
  $('composer-input').required = state.pending.length === 0 && state.pendingAudio.length === 0;
}

// Pasted or dropped files: recordings go with the recordings, anything else is read as an image.
function attachDropped(files) {
  const audio = files.filter(isAudioFile);
  if (audio.length) attachAudio(audio);
  attach(files.filter((f) => !isAudioFile(f)));
}

// The status line after attaching `count` files of a kind (`noun`): each file refused and why,
// or how many were attached.
function reportAttached(count, noun, errors) {
  const attached = count ? `${count} ${noun}${count > 1 ? 's' : ''} attached` : '';
  if (errors.length) setStatus(errors.join('; ') + (attached ? ` (${attached})` : ''), true);
  else setStatus(`${attached[0].toUpperCase()}${attached.slice(1)}.`);
}

// Checks and reads `files` (picked, pasted, dropped or recorded) into the pending recordings; the
// status line names each file refused and why. Resolves to the number attached.
async function attachAudio(files) {
  if (files.length === 0) return 0;
  if (!audioLoaded()) {
    setStatus(`This server cannot hear recordings: ${NO_AUDIO}.`, true);
    return 0;
  }
  const { clips, errors } = await readAudioFiles(files);
  state.pendingAudio.push(...clips);
  renderPending();
  reportAttached(clips.length, 'recording', errors);
  return clips.length;
}

// Checks and reads `files` (picked, pasted or dropped) into the pending images; the status line
// names each file refused and why.
async function attach(files) {
  if (files.length === 0) return;
  if (!visionLoaded()) {
    setStatus(`This server cannot read images: ${NO_VISION}.`, true);
    return;
  }
  const { images, errors } = await readImages(files);
  state.pending.push(...images);
  renderPending();
  reportAttached(images.length, 'image', errors);
}

const carriesFiles = (e) => Boolean(e.dataTransfer && [...e.dataTransfer.types].includes('Files'));

function setupAttachments() {
  const input = $('composer-input');
  const picker = $('image-input');
  const composer = $('composer');
  $('attach-button').addEventListener('click', () => picker.click());
  picker.addEventListener('change', () => {
    const files = [...picker.files];
    picker.value = '';  // the same file can be picked again
    attach(files);
  });
  const audioPicker = $('audio-input');
  $('audio-button').addEventListener('click', () => audioPicker.click());
  audioPicker.addEventListener('change', () => {
    const files = [...audioPicker.files];
    audioPicker.value = '';
    attachAudio(files);
  });
  $('record-button').addEventListener('click', toggleRecording);
  input.addEventListener('paste', (e) => {
    const files = [...((e.clipboardData && e.clipboardData.files) || [])];
    if (files.length === 0) return;
    // Text pasted along with the image (a copied web page) is still inserted.
    if (!e.clipboardData.types.includes('text/plain')) e.preventDefault();
    attachDropped(files);
  });
  composer.addEventListener('dragover', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    composer.classList.add('dropping');
  });
  composer.addEventListener('dragleave', (e) => {
    if (!composer.contains(e.relatedTarget)) composer.classList.remove('dropping');
  });
  composer.addEventListener('drop', (e) => {
    composer.classList.remove('dropping');
    if (!carriesFiles(e)) return;
    e.preventDefault();
    attachDropped([...e.dataTransfer.files]);
  });
  // A file dropped elsewhere on the page would open it in place of the conversation.
  document.addEventListener('dragover', (e) => {
    if (!carriesFiles(e) || composer.contains(e.target)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'none';
  });
  document.addEventListener('drop', (e) => {
    if (carriesFiles(e) && !composer.contains(e.target)) e.preventDefault();
  });
}

// ---- recording from the microphone ----------------------------------------------------------

function showRecording(recorder) {
  const b = $('record-button');
  b.setAttribute('aria-pressed', String(recorder !== null));
  b.classList.toggle('recording', recorder !== null);
  b.textContent = recorder ? `Stop recording (${formatDuration(recorder.seconds())})` : 'Record';
  if (recorder) b.title = 'Stop and attach the recording';
}

// Record starts; the same button stops and attaches a WAV file. A refused or missing microphone
// is said on the status line and leaves the button ready to try again.
async function toggleRecording() {
  if (state.recorder) {
    await stopRecording();
    return;
  }
  const unavailable = recordingUnavailable();
  if (unavailable) {
    setStatus(`Cannot record: ${unavailable}.`, true);
    return;
  }
  state.recorder = {};  // starting: a second press waits for the microphone
  $('record-button').disabled = true;
  setStatus('Asking for the microphone…');
  try {
    state.recorder = await startRecording(MAX_AUDIO_BYTES, () => stopRecording('the size limit was reached'));
  } catch (e) {
    state.recorder = null;
    $('record-button').disabled = false;
    setStatus(recordingError(e), true);
    return;
  }
  $('record-button').disabled = false;
  setStatus('Recording… press Stop recording to attach it.');
  const recorder = state.recorder;
  showRecording(recorder);
  const tick = setInterval(() => (state.recorder === recorder ? showRecording(recorder) : clearInterval(tick)), 250);
}

async function stopRecording(why = '') {
  const recorder = state.recorder;
  if (!recorder || !recorder.stop) return;
  state.recorder = null;
  showRecording(null);
  updateAttachControls();
  const blob = await recorder.stop();
  if (blob.size <= 44) {
    setStatus('The recording is empty: nothing came from the microphone.', true);
    return;
  }
  state.recordings += 1;
  const file = new File([blob], `recording ${state.recordings}.wav`, { type: 'audio/wav' });
  if ((await attachAudio([file])) === 0) return;  // the status line says why
  const attached = `Recording attached (${formatDuration(recorder.seconds())}).`;
  setStatus(why ? `Recording stopped: ${why}. ${attached}` : attached);
}

export function setupComposerMedia(page) {
  ({ state, setStatus } = page);
  setupAttachments();
}
