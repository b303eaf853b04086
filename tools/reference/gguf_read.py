"""Minimal GGUF v3 reader with vectorised NumPy dequantization to float64 (tandem's oracle).

Follows docs/formats.md § GGUF layout, § Tensor types and § Block layouts. It
uses no gguf-py. Every problem in a file raises GGUFError naming the file, the field and the
byte offset (or the key / tensor).

Tensors come out in row-major shape reversed from ggml's ne: ne = [in, out] -> shape (out, in).
"""

import mmap
import struct

import numpy as np


class GGUFError(ValueError):
    """A malformed or unsupported GGUF file."""


GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# ggml type id -> (name, values per block, bytes per block). docs/formats.md § Tensor types.
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17), 40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18), 42: ("Q2_0", 64, 18),
}
TYPE_IDS = {name: tid for tid, (name, _, _) in GGML_TYPES.items()}
INTEGER_TYPES = {"I8": "<i1", "I16": "<i2", "I32": "<i4", "I64": "<i8"}

# Metadata value types: id -> (name, struct format or None). docs/formats.md § Metadata value types.
VALUE_TYPES = {
    0: ("UINT8", "<B"), 1: ("INT8", "<b"), 2: ("UINT16", "<H"), 3: ("INT16", "<h"),
    4: ("UINT32", "<I"), 5: ("INT32", "<i"), 6: ("FLOAT32", "<f"), 7: ("BOOL", "<B"),
    8: ("STRING", None), 9: ("ARRAY", None), 10: ("UINT64", "<Q"), 11: ("INT64", "<q"),
    12: ("FLOAT64", "<d"),
}
NUMPY_OF_VALUE = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4",
                  7: "<u1", 10: "<u8", 11: "<i8", 12: "<f8"}
MAX_STRING = 1 << 30
MAX_ARRAY = 1 << 30


# ----------------------------------------------------------------------------------------------
# Dequantization. Each function maps raw blocks uint8[nb, type_size] -> float64[nb, block].


def _f16(col):
    """Little-endian fp16 field: uint8[nb, 2] -> float64[nb, 1]."""
    return np.ascontiguousarray(col).view("<f2").astype(np.float64)


def _legacy_nibbles(qs):
    """qs uint8[nb, 16] -> quants [nb, 32]: element j low nibble, element j+16 high nibble."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int64)


def _legacy_high_bits(qh):
    """qh uint8[nb, 4] (one LE u32) -> bit e of it for e = 0..31 as int64[nb, 32]."""
    word = np.ascontiguousarray(qh).view("<u4").astype(np.int64)  # [nb, 1]
    return (word >> np.arange(32)) & 1


def dequant_q4_0(b):
    return (_legacy_nibbles(b[:, 2:18]) - 8) * _f16(b[:, 0:2])


def dequant_q4_1(b):
    return _legacy_nibbles(b[:, 4:20]) * _f16(b[:, 0:2]) + _f16(b[:, 2:4])


def dequant_q5_0(b):
    q = _legacy_nibbles(b[:, 6:22]) | (_legacy_high_bits(b[:, 2:6]) << 4)
    return (q - 16) * _f16(b[:, 0:2])


def dequant_q5_1(b):
    q = _legacy_nibbles(b[:, 8:24]) | (_legacy_high_bits(b[:, 4:8]) << 4)
    return q * _f16(b[:, 0:2]) + _f16(b[:, 2:4])


def dequant_q8_0(b):
    return b[:, 2:34].view(np.int8).astype(np.float64) * _f16(b[:, 0:2])


def _k_scales_mins(s):
    """Q4_K/Q5_K 12-byte packing -> (sc, m), each int64[nb, 8] of 6-bit values."""
    s = s.astype(np.int64)
    sc = np.empty((s.shape[0], 8), np.int64)
    m = np.empty((s.shape[0], 8), np.int64)
    sc[:, :4] = s[:, 0:4] & 63
    m[:, :4] = s[:, 4:8] & 63
    sc[:, 4:] = (s[:, 8:12] & 0x0F) | ((s[:, 0:4] >> 6) << 4)
    m[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, m


def _k_nibbles(qs):
    """qs uint8[nb, 128] -> [nb, 256]: qs[32c+l] low = element 64c+l, high = 64c+32+l."""
    qs = qs.reshape(-1, 4, 32).astype(np.int64)
    return np.stack([qs & 0x0F, qs >> 4], axis=2).reshape(-1, 256)


def _k_apply(q, b):
    """x = d*sc_j*q - dmin*m_j over 8 sub-blocks of 32 (Q4_K, Q5_K)."""
    sc, m = _k_scales_mins(b[:, 4:16])
    d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
    x = (d * sc)[:, :, None] * q.reshape(-1, 8, 32) - (dmin * m)[:, :, None]
    return x.reshape(-1, 256)


def dequant_q4_k(b):
    return _k_apply(_k_nibbles(b[:, 16:144]), b)


def dequant_q5_k(b):
    qh = b[:, 16:48].astype(np.int64)  # [nb, 32] indexed by l
    shifts = np.arange(8).reshape(4, 2)  # [c, half] -> bit 2c + half
    hb = (qh[:, None, None, :] >> shifts[None, :, :, None]) & 1  # [nb, 4, 2, 32]
    q = _k_nibbles(b[:, 48:176]) + 16 * hb.reshape(-1, 256)
    return _k_apply(q, b)


def dequant_q6_k(b):
    ql = b[:, 0:128].reshape(-1, 2, 2, 32).astype(np.int64)  # [nb, n, k&1, l]
    qh = b[:, 128:192].reshape(-1, 2, 1, 32).astype(np.int64)  # [nb, n, -, l]
    low = np.concatenate([ql & 0x0F, ql >> 4], axis=2)  # [nb, n, k, l], k = 0..3
    high = (qh >> (2 * np.arange(4)).reshape(1, 1, 4, 1)) & 3
    q = ((low | (high << 4)) - 32).reshape(-1, 16, 16)  # 16 sub-blocks of 16
    scales = b[:, 192:208].view(np.int8).astype(np.float64)  # [nb, 16]
    x = _f16(b[:, 208:210])[:, :, None] * scales[:, :, None] * q
    return x.reshape(-1, 256)


def dequant_bf16(b):
    u32 = np.ascontiguousarray(b).view("<u2").astype(np.uint32) << 16
    return u32.view(np.float32).astype(np.float64)


DEQUANT = {
    "F32": lambda b: np.ascontiguousarray(b).view("<f4").astype(np.float64),
    "F16": lambda b: np.ascontiguousarray(b).view("<f2").astype(np.float64),
    "F64": lambda b: np.ascontiguousarray(b).view("<f8").astype(np.float64),
    "BF16": dequant_bf16, "Q8_0": dequant_q8_0, "Q4_0": dequant_q4_0, "Q4_1": dequant_q4_1,
    "Q5_0": dequant_q5_0, "Q5_1": dequant_q5_1, "Q4_K": dequant_q4_k, "Q5_K": dequant_q5_k,
    "Q6_K": dequant_q6_k,
}


def dequantize(raw, type_name, n_values):
    """Raw bytes of n_values values of a ggml type -> float64[n_values] (or int64 for I*)."""
    tid = TYPE_IDS.get(type_name)
    if tid is None:
        raise GGUFError(f"unknown ggml type {type_name}")
    _, block, size = GGML_TYPES[tid]
    if n_values % block or len(raw) != n_values // block * size:
        raise GGUFError(f"{type_name}: {len(raw)} bytes do not hold {n_values} values")
    raw = np.frombuffer(raw, np.uint8) if not isinstance(raw, np.ndarray) else raw
    if type_name in INTEGER_TYPES:
        return np.ascontiguousarray(raw).view(INTEGER_TYPES[type_name]).astype(np.int64)
    fn = DEQUANT.get(type_name)
    if fn is None:
        raise GGUFError(f"dequantization of {type_name} is not implemented in the reference")
    return fn(raw.reshape(-1, size)).reshape(-1)


# ----------------------------------------------------------------------------------------------
# File reader.


class TensorInfo:
    """One tensor-info record: name, ne (ggml order), type name, offset from data start."""

    def __init__(self, name, ne, type_name, offset, n_bytes):
        self.name, self.ne, self.type_name = name, ne, type_name
        self.offset, self.n_bytes = offset, n_bytes

    @property
    def shape(self):
        """Row-major NumPy shape: ne reversed."""
        return tuple(reversed(self.ne))

    @property
    def n_values(self):
        return int(np.prod(self.ne, dtype=np.int64))


class _Cursor:
    """Bounds-checked little-endian reader over the mapped file."""

    def __init__(self, buf, path):
        self.buf, self.path, self.pos = buf, path, 0

    def fail(self, field, msg):
        raise GGUFError(f"{self.path}: {field} at byte offset {self.pos}: {msg}")

    def take(self, n, field):
        if n < 0 or self.pos + n > len(self.buf):
            self.fail(field, f"needs {n} bytes but the file ends at {len(self.buf)}")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def scalar(self, fmt, field):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), field))[0]

    def string(self, field):
        n = self.scalar("<Q", field + " length")
        if n > MAX_STRING:
            self.fail(field, f"string length {n} exceeds 1 GiB")
        raw = self.take(n, field)
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            self.fail(field, "string is not valid UTF-8")

    def value(self, vtype, field, in_array=False):
        if vtype not in VALUE_TYPES:
            self.fail(field, f"invalid value type {vtype}")
        name, fmt = VALUE_TYPES[vtype]
        if name == "STRING":
            return self.string(field)
        if name == "ARRAY":
            if in_array:
                self.fail(field, "nested arrays are not allowed")
            etype = self.scalar("<I", field + " element type")
            count = self.scalar("<Q", field + " element count")
            if count > MAX_ARRAY:
                self.fail(field, f"array length {count} exceeds 2^30")
            if etype in NUMPY_OF_VALUE:
                dt = np.dtype(NUMPY_OF_VALUE[etype])
                arr = np.frombuffer(self.take(count * dt.itemsize, field), dt).copy()
                return arr.astype(bool) if etype == 7 else arr
            return [self.value(etype, f"{field}[{i}]", True) for i in range(count)]
        v = self.scalar(fmt, field)
        if name == "BOOL":
            if v > 1:
                self.fail(field, f"bool value {v} is not 0 or 1")
            return bool(v)
        return v


class GGUFFile:
    """A parsed GGUF file: .metadata (key -> value), .tensors (name -> TensorInfo).

    Numeric arrays in metadata are NumPy arrays; string arrays are lists of str.
    """

    def __init__(self, path):
        self.path = str(path)
        with open(self.path, "rb") as f:
            size = f.seek(0, 2)
            if size == 0:
                raise GGUFError(f"{self.path}: magic at byte offset 0: file is empty")
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._buf = memoryview(self._map)
        self._parse()

    def _parse(self):
        c = _Cursor(self._buf, self.path)
        if bytes(c.take(4, "magic")) != GGUF_MAGIC:
            c.pos = 0
            c.fail("magic", "not a GGUF file (expected bytes 'GGUF')")
        self.version = c.scalar("<I", "version")
        if self.version & 0xFFFF == 0:
            c.fail("version", "file is byte-swapped (big-endian); not supported")
        if self.version not in (2, 3):
            c.fail("version", f"unsupported GGUF version {self.version}")
        n_tensors = c.scalar("<Q", "tensor_count")
        n_kv = c.scalar("<Q", "kv_count")
        if n_tensors > (1 << 31) or n_kv > (1 << 31):
            c.fail("tensor_count", f"implausible counts {n_tensors} / {n_kv}")
        self.metadata = {}
        self.value_types = {}
        for i in range(n_kv):
            key = c.string(f"kv[{i}] key")
            if not key:
                c.fail(f"kv[{i}] key", "empty key")
            if key in self.metadata:
                c.fail(f"kv[{i}] key", f"duplicate key '{key}'")
            vtype = c.scalar("<I", f"key '{key}' value type")
            self.value_types[key] = vtype
            self.metadata[key] = c.value(vtype, f"key '{key}'")
        self.alignment = DEFAULT_ALIGNMENT
        if "general.alignment" in self.metadata:
            a = self.metadata["general.alignment"]
            if self.value_types["general.alignment"] != 4 or a == 0 or a & (a - 1):
                raise GGUFError(f"{self.path}: key 'general.alignment': must be a u32 power of"
                                f" two, got {a!r}")
            self.alignment = a
        self.tensors = {}
        for i in range(n_tensors):
            self._read_tensor_info(c, i)
        self.data_start = -(-c.pos // self.alignment) * self.alignment
        for t in self.tensors.values():
            end = self.data_start + t.offset + t.n_bytes
            if t.offset % self.alignment or end > len(self._buf):
                raise GGUFError(f"{self.path}: tensor '{t.name}': data at offset {t.offset} "
                                f"(+{t.n_bytes} bytes) is misaligned or past the file end "
                                f"({len(self._buf)} bytes)")

    def _read_tensor_info(self, c, i):
        name = c.string(f"tensor[{i}] name")
        field = f"tensor '{name}'"
        if name in self.tensors:
            c.fail(field, "duplicate tensor name")
        n_dims = c.scalar("<I", field + " n_dims")
        if not 1 <= n_dims <= 4:
            c.fail(field, f"n_dims {n_dims} not in 1..4")
        ne = tuple(c.scalar("<Q", f"{field} ne[{d}]") for d in range(n_dims))
        tid = c.scalar("<I", field + " type")
        if tid not in GGML_TYPES:
            c.fail(field, f"unknown ggml type id {tid}")
        tname, block, size = GGML_TYPES[tid]
        if ne[0] % block:
            c.fail(field, f"ne[0]={ne[0]} is not a multiple of the {tname} block size {block}")
        n_values = 1
        for d in ne:
            n_values *= d
        if n_values > (1 << 40):
            c.fail(field, f"implausible element count {n_values}")
        offset = c.scalar("<Q", field + " offset")
        self.tensors[name] = TensorInfo(name, ne, tname, offset, n_values // block * size)

    # -- access ------------------------------------------------------------------------------

    def get(self, key, default=None):
        return self.metadata.get(key, default)

    def require(self, key):
        if key not in self.metadata:
            raise GGUFError(f"{self.path}: required key '{key}' is missing")
        return self.metadata[key]

    def info(self, name):
        if name not in self.tensors:
            raise GGUFError(f"{self.path}: tensor '{name}' is missing")
        return self.tensors[name]

    def raw(self, name):
        """The tensor's bytes as uint8[n_bytes] (a view into the mapped file)."""
        t = self.info(name)
        start = self.data_start + t.offset
        return np.frombuffer(self._buf[start:start + t.n_bytes], np.uint8)

    def tensor(self, name):
        """Whole tensor, dequantized: float64 (int64 for I* types), shape ne reversed."""
        t = self.info(name)
        return dequantize(self.raw(name), t.type_name, t.n_values).reshape(t.shape)

    def rows(self, name, index):
        """Selected rows (ne[1] index) of a 2-D tensor: float64[len(index), ne[0]]."""
        t = self.info(name)
        if len(t.ne) != 2:
            raise GGUFError(f"{self.path}: tensor '{t.name}': rows() needs 2 dims, has {t.ne}")
        index = np.asarray(index, np.int64).reshape(-1)
        if index.size and (index.min() < 0 or index.max() >= t.ne[1]):
            raise GGUFError(f"{self.path}: tensor '{t.name}': row index out of range "
                            f"0..{t.ne[1] - 1}")
        row_bytes = t.n_bytes // t.ne[1]
        raw = self.raw(name).reshape(t.ne[1], row_bytes)[index]
        return dequantize(raw.reshape(-1), t.type_name, index.size * t.ne[0]).reshape(
            index.size, t.ne[0])
