// Images sent with a message: a file is checked (PNG, JPEG or WebP by its first bytes, whatever
// its name or declared type says; at most MAX_IMAGE_BYTES) and read as a data URL, the form the
// OpenAI `image_url` content part carries. Also the thumbnail strip shown under the message box
// and in edited messages, and the images shown in the transcript.

// The server's default limit on one image's bytes.
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const ACCEPTED = 'PNG, JPEG or WebP';

// The MIME type of an image from its first bytes, or null when it is not PNG, JPEG or WebP.
export function sniffImageType(bytes) {
  const starts = (sig, at = 0) => sig.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return null;
}

// "20 MB", "2.4 MB", "0.1 MB".
export function megabytes(n) {
  return `${Number(Math.max(n / (1024 * 1024), 0.1).toFixed(1))} MB`;
}

export function readAsDataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

// {name, type, size, url} for `file`; throws an Error naming the file when it is not an image
// the server takes or is too large.
export async function readImage(file) {
  const name = file.name || 'pasted image';
  const head = new Uint8Array(await file.slice(0, 12).arrayBuffer());
  const type = sniffImageType(head);
  if (type === null) throw new Error(`${name} is not a ${ACCEPTED} image`);
  if (file.size > MAX_IMAGE_BYTES) {
    throw new Error(`${name} is ${megabytes(file.size)}; the limit is ${megabytes(MAX_IMAGE_BYTES)} per image`);
  }
  // The sniffed type, not the declared one, names the data in the URL.
  const url = await readAsDataUrl(file.slice(0, file.size, type));
  return { name, type, size: file.size, url };
}

// Reads `files` in order. Resolves to {images, errors}: the images that passed and one message
// per file that did not.
export async function readImages(files) {
  const images = [];
  const errors = [];
  for (const file of files) {
    try {
      images.push(await readImage(file));
    } catch (e) {
      errors.push(e.message);
    }
  }
  return { images, errors };
}

// The OpenAI content of a user message: the plain string without images or other parts, else a
// text part (when there is text), one image_url part per image, then `others` (input_audio parts).
export function messageContent(text, images, others = []) {
  if ((!images || images.length === 0) && others.length === 0) return text;
  const parts = [];
  if (text.trim() !== '') parts.push({ type: 'text', text });
  for (const image of images || []) parts.push({ type: 'image_url', image_url: { url: image.url } });
  parts.push(...others);
  return parts;
}

// The transcript is redrawn on every streamed token: one <img> per image, made once and reused,
// so a large data URL is not decoded again each frame.
const shown = new WeakMap();

function imageElement(image, className) {
  const img = document.createElement('img');
  img.className = className;
  img.src = image.url;
  img.alt = image.name;
  img.title = `${image.name} (${megabytes(image.size)})`;
  return img;
}

// The images of a sent message, for the transcript.
export function messageImages(images) {
  const div = document.createElement('div');
  div.className = 'msg-images';
  for (const image of images) {
    if (!shown.has(image)) shown.set(image, imageElement(image, 'msg-image'));
    div.append(shown.get(image));
  }
  return div;
}

// Fills list `ul` with a thumbnail and a remove (×) button per image; onRemove(index) is called
// when one is pressed. The list is hidden when empty.
export function renderThumbnails(ul, images, onRemove) {
  ul.replaceChildren(
    ...images.map((image, index) => {
      const li = document.createElement('li');
      li.className = 'thumb';
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'remove';
      remove.textContent = '×';
      remove.setAttribute('aria-label', `Remove ${image.name}`);
      remove.title = `Remove ${image.name}`;
      remove.addEventListener('click', () => onRemove(index));
      li.append(imageElement(image, 'thumb-image'), remove);
      return li;
    }),
  );
  ul.hidden = images.length === 0;
}
