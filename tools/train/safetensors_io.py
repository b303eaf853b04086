"""Minimal safetensors writer and reader (docs/formats.md) on NumPy arrays, no extra packages.

write(path, {name: array}, dtype="F32"|"BF16") writes float arrays as F32 or BF16 (round to
nearest even) and integer arrays as I64; read(path) returns {name: float32 / int64 array}.
"""

import json
import struct

import numpy as np


def to_bf16_bits(a):
    """float32 array -> uint16 bfloat16 bits, round to nearest even."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def write(path, tensors, dtype="F32"):
    """tensors: {name: np.ndarray}; names are written sorted. dtype applies to float tensors."""
    if dtype not in ("F32", "BF16"):
        raise ValueError(f"unsupported dtype {dtype}")
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        a = np.asarray(tensors[name])
        if np.issubdtype(a.dtype, np.integer):
            data, kind = np.ascontiguousarray(a, dtype="<i8").tobytes(), "I64"
        elif dtype == "BF16":
            data, kind = to_bf16_bits(a).astype("<u2").tobytes(), "BF16"
        else:
            data, kind = np.ascontiguousarray(a, dtype="<f4").tobytes(), "F32"
        header[name] = {"dtype": kind, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def read(path):
    """-> {name: np.ndarray} (F32/BF16/F16 as float32, I64/I32 as int64)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            begin, end = info["data_offsets"]
            f.seek(base + begin)
            raw = f.read(end - begin)
            kind, shape = info["dtype"], info["shape"]
            if kind == "F32":
                a = np.frombuffer(raw, "<f4")
            elif kind == "BF16":
                a = from_bf16_bits(np.frombuffer(raw, "<u2"))
            elif kind == "F16":
                a = np.frombuffer(raw, "<f2").astype(np.float32)
            elif kind in ("I64", "I32"):
                a = np.frombuffer(raw, "<i8" if kind == "I64" else "<i4").astype(np.int64)
            else:
                raise ValueError(f"{path}: tensor '{name}' has unsupported dtype {kind}")
            out[name] = a.reshape(shape).copy()
    return out
