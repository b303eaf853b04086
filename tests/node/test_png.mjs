// Test pictures for the node suites: PNG files written here with zlib (8-bit RGB, no filter), and
// data URLs of them.
import { deflateSync } from 'node:zlib';

function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function pngChunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

// A PNG of width × height, 8-bit RGB, whose pixel (x, y) is colour(x, y) = [r, g, b].
export function encodePng(width, height, colour) {
  const stride = 3 * width + 1;  // each row starts with its filter byte (0: none)
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) raw.set(colour(x, y), y * stride + 1 + 3 * x);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;  // bits per sample
  header[9] = 2;  // colour type: RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

// A w x h PNG with a pattern of `seed`: other seeds, other pixels.
export function png(w, h, seed) {
  return encodePng(w, h, (x, y) => [(x * 7 + seed * 31) & 255, (y * 5 + seed * 17) & 255,
    ((x ^ y) + seed) & 255]);
}

export const dataUrl = (bytes, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;
