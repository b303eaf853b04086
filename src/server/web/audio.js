// Recordings sent with a message: a file (picked, dropped or recorded) is read as a data URL;
// its OpenAI `input_audio` part carries the plain base64 after the comma and a `format` told by
// the file's declared type, else its name. The server checks the bytes against that format and
// names the part when they disagree. Also the players shown under the message box, in edited
// messages and in the transcript.

import { megabytes, readAsDataUrl } from './attachments.js';

// The server's limit on one recording's bytes.
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
export const ACCEPTED_AUDIO = 'WAV, MP3, FLAC or Ogg';

const MIME = { wav: 'audio/wav', mp3: 'audio/mpeg', flac: 'audio/flac', ogg: 'audio/ogg' };

// Declared types and file extensions, as the server reads a `format`.
const FORMAT_OF = {
  'audio/wav': 'wav', 'audio/wave': 'wav', 'audio/x-wav': 'wav', 'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3', 'audio/mp3': 'mp3', 'audio/mpeg3': 'mp3', 'audio/x-mpeg-3': 'mp3',
  'audio/flac': 'flac', 'audio/x-flac': 'flac', 'audio/ogg': 'ogg', 'audio/opus': 'ogg',
  wav: 'wav', wave: 'wav', mp3: 'mp3', flac: 'flac', ogg: 'ogg', oga: 'ogg', opus: 'ogg',
};

// 'wav', 'mp3', 'flac' or 'ogg' for `file` by its declared type, else by its extension; null
// when neither names one of them.
export function audioFormatOf(file) {
  const type = (file.type || '').split(';')[0].trim().toLowerCase();
  if (FORMAT_OF[type]) return FORMAT_OF[type];
  const dot = (file.name || '').lastIndexOf('.');
  const extension = dot >= 0 ? file.name.slice(dot + 1).toLowerCase() : '';
  return FORMAT_OF[extension] || null;
}

// Whether a pasted or dropped file is meant as a recording rather than an image.
export const isAudioFile = (file) => audioFormatOf(file) !== null || /^audio\//.test(file.type || '');

// {name, format, size, url} for `file`; throws an Error naming the file when its type and name
// name no format the server takes, or it is too large.
export async function readAudio(file) {
  const name = file.name || 'recording';
  const format = audioFormatOf(file);
  if (format === null) throw new Error(`${name} is not a ${ACCEPTED_AUDIO} file`);
  if (file.size > MAX_AUDIO_BYTES) {
    throw new Error(`${name} is ${megabytes(file.size)}; the limit is ${megabytes(MAX_AUDIO_BYTES)} per recording`);
  }
  const url = await readAsDataUrl(file.slice(0, file.size, MIME[format]));
  return { name, format, size: file.size, url };
}

// Reads `files` in order. Resolves to {clips, errors}: the recordings that passed and one
// message per file that did not.
export async function readAudioFiles(files) {
  const clips = [];
  const errors = [];
  for (const file of files) {
    try {
      clips.push(await readAudio(file));
    } catch (e) {
      errors.push(e.message);
    }
  }
  return { clips, errors };
}

// The OpenAI content part of a recording: plain base64, no data: prefix.
export function audioPart(clip) {
  return { type: 'input_audio', input_audio: { data: clip.url.slice(clip.url.indexOf(',') + 1), format: clip.format } };
}

// "0.4 s", "12.0 s", "1:05".
export function formatDuration(seconds) {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

// The transcript is redrawn on every streamed token: one player per recording, made once and
// reused, so playback is not cut and the data URL is not decoded again each frame.
const players = new WeakMap();

// A player and a label "name · duration" (the duration once the browser has read it).
function player(clip) {
  if (players.has(clip)) return players.get(clip);
  const div = document.createElement('div');
  div.className = 'clip';
  const audio = document.createElement('audio');
  audio.controls = true;
  audio.preload = 'metadata';
  audio.src = clip.url;
  const label = document.createElement('span');
  label.className = 'clip-label';
  label.textContent = clip.name;
  label.title = `${clip.name} (${clip.format.toUpperCase()}, ${megabytes(clip.size)})`;
  audio.addEventListener('loadedmetadata', () => {
    if (isFinite(audio.duration)) label.textContent = `${clip.name} · ${formatDuration(audio.duration)}`;
  });
  audio.addEventListener('error', () => {
    label.textContent = `${clip.name} · this browser cannot play it (the server may still read it)`;
  });
  div.append(audio, label);
  players.set(clip, div);
  return div;
}

// The recordings of a sent message, for the transcript.
export function messageAudio(clips) {
  const div = document.createElement('div');
  div.className = 'msg-audio';
  div.append(...clips.map(player));
  return div;
}

// Fills list `ul` with a player and a remove (×) button per recording; onRemove(index) is called
// when one is pressed. The list is hidden when empty.
export function renderClips(ul, clips, onRemove) {
  ul.replaceChildren(
    ...clips.map((clip, index) => {
      const li = document.createElement('li');
      li.className = 'clip-item';
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'remove';
      remove.textContent = '×';
      remove.setAttribute('aria-label', `Remove ${clip.name}`);
      remove.title = `Remove ${clip.name}`;
      remove.addEventListener('click', () => onRemove(index));
      li.append(player(clip), remove);
      return li;
    }),
  );
  ul.hidden = clips.length === 0;
}
