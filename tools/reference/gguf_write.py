"""Minimal GGUF v3 writer for the reference's self-tests (random test models, no gguf-py).

Follows docs/formats.md § GGUF layout: header, metadata key/values, tensor infos, padding to the
alignment, tensor data each starting at an aligned offset. Tensors are given as NumPy arrays in
row-major shape (ne reversed, as gguf_read.py returns them) and are stored as F32, F16, BF16 or
Q8_0. Metadata values carry an explicit type name, because readers such as clip.cpp insist on
exact value types.
"""

import struct

import numpy as np

from gguf_read import DEFAULT_ALIGNMENT, TYPE_IDS

# Metadata type name -> (value type id, struct format) for scalars.
SCALAR_TYPES = {
    "u8": (0, "<B"), "i8": (1, "<b"), "u16": (2, "<H"), "i16": (3, "<h"), "u32": (4, "<I"),
    "i32": (5, "<i"), "f32": (6, "<f"), "bool": (7, "<B"), "u64": (10, "<Q"), "i64": (11, "<q"),
    "f64": (12, "<d"),
}
STRING_TYPE, ARRAY_TYPE = 8, 9


def _string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _value(type_name, value):
    """Encoded value (without its type id) and its type id. type_name: a SCALAR_TYPES key,
    "str", or one of those followed by "[]" for an array."""
    if type_name.endswith("[]"):
        elem = type_name[:-2]
        items = list(value)
        if elem == "str":
            payload = b"".join(_string(s) for s in items)
            return ARRAY_TYPE, struct.pack("<IQ", STRING_TYPE, len(items)) + payload
        tid, fmt = SCALAR_TYPES[elem]
        payload = b"".join(struct.pack(fmt, v) for v in items)
        return ARRAY_TYPE, struct.pack("<IQ", tid, len(items)) + payload
    if type_name == "str":
        return STRING_TYPE, _string(value)
    tid, fmt = SCALAR_TYPES[type_name]
    return tid, struct.pack(fmt, int(value) if type_name == "bool" else value)


def quantize_q8_0(values):
    """float values [n] (n a multiple of 32) -> Q8_0 bytes: per block an fp16 scale
    d = max|x|/127 and 32 int8 quants round(x/d)."""
    x = np.asarray(values, np.float32).reshape(-1, 32)
    amax = np.max(np.abs(x), axis=1, keepdims=True)
    d = amax / 127.0
    inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
    q = np.clip(np.rint(x * inv), -127, 127).astype(np.int8)
    out = np.empty((x.shape[0], 34), np.uint8)
    out[:, 0:2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def encode_tensor(array, type_name):
    """Row-major array -> (ne, raw bytes) in the given ggml type."""
    a = np.asarray(array)
    ne = [int(d) for d in reversed(a.shape)] or [1]
    flat = a.reshape(-1)
    if type_name == "F32":
        raw = flat.astype("<f4").tobytes()
    elif type_name == "F16":
        raw = flat.astype("<f2").tobytes()
    elif type_name == "BF16":
        bits = flat.astype(np.float32).view(np.uint32)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
        raw = rounded.astype("<u2").tobytes()
    elif type_name == "Q8_0":
        if ne[0] % 32:
            raise ValueError(f"Q8_0 needs ne[0] to be a multiple of 32, got {ne[0]}")
        raw = quantize_q8_0(flat)
    else:
        raise ValueError(f"gguf_write: tensor type {type_name} is not supported")
    return ne, raw


def write_gguf(path, metadata, tensors, alignment=DEFAULT_ALIGNMENT):
    """Write a GGUF v3 file.

    metadata: [(key, type name, value)] in file order (see _value for type names).
    tensors: [(name, row-major array, ggml type name)] in file order.
    """
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata)))
    for key, type_name, value in metadata:
        tid, payload = _value(type_name, value)
        out += _string(key) + struct.pack("<I", tid) + payload
    blobs = []
    offset = 0
    for name, array, type_name in tensors:
        ne, raw = encode_tensor(array, type_name)
        out += _string(name) + struct.pack("<I", len(ne))
        out += b"".join(struct.pack("<Q", n) for n in ne)
        out += struct.pack("<IQ", TYPE_IDS[type_name], offset)
        blobs.append(raw)
        offset += -(-len(raw) // alignment) * alignment
    out += bytes(-len(out) % alignment)
    for raw in blobs:
        out += raw + bytes(-len(raw) % alignment)
    with open(path, "wb") as f:
        f.write(out)
