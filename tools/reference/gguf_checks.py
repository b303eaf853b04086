"""Self-contained checks of gguf_read.py (no fixture needed), run by test_reference.py.

Dequantizers are compared with plain per-element loops written from the element formulas of
docs/formats.md (a second, independent reading of the spec); the reader is fed a GGUF file
written here byte by byte, then damaged copies of it.
"""

import os
import struct
import tempfile

import numpy as np

import gguf_read as g

RNG = np.random.default_rng(20240607)


def _f16_bytes(values):
    return np.asarray(values, np.float16).astype("<f2").tobytes()


def _random_blocks(type_name, n_blocks):
    """Random blocks with every fp16 field set to a finite value. -> uint8[n_blocks, size]."""
    _, _, size = g.GGML_TYPES[g.TYPE_IDS[type_name]]
    b = RNG.integers(0, 256, (n_blocks, size), dtype=np.uint8)
    fp16_fields = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
                   "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}[type_name]
    for off in fp16_fields:
        vals = RNG.uniform(-2.0, 2.0, n_blocks)
        b[:, off:off + 2] = np.frombuffer(_f16_bytes(vals), np.uint8).reshape(n_blocks, 2)
    return b


def _h(block, off):
    return float(np.frombuffer(bytes(block[off:off + 2]), "<f2")[0])


def _scalar_block(type_name, blk):
    """One block -> list of floats, element by element from docs/formats.md § Block layouts."""
    blk = [int(v) for v in blk]
    out = []
    if type_name in ("Q4_0", "Q4_1", "Q5_0", "Q5_1"):
        qs_off = {"Q4_0": 2, "Q4_1": 4, "Q5_0": 6, "Q5_1": 8}[type_name]
        qh = 0
        if type_name == "Q5_0":
            qh = struct.unpack("<I", bytes(blk[2:6]))[0]
        if type_name == "Q5_1":
            qh = struct.unpack("<I", bytes(blk[4:8]))[0]
        d = _h(blk, 0)
        for e in range(32):
            byte = blk[qs_off + e % 16]
            q = byte & 15 if e < 16 else byte >> 4
            q |= ((qh >> e) & 1) << 4 if type_name in ("Q5_0", "Q5_1") else 0
            if type_name == "Q4_0":
                out.append((q - 8) * d)
            elif type_name == "Q5_0":
                out.append((q - 16) * d)
            else:
                out.append(q * d + _h(blk, 2))
    elif type_name == "Q8_0":
        d = _h(blk, 0)
        out = [(v - 256 if v > 127 else v) * d for v in blk[2:34]]
    elif type_name in ("Q4_K", "Q5_K"):
        d, dmin, s = _h(blk, 0), _h(blk, 2), blk[4:16]
        qs_off = 16 if type_name == "Q4_K" else 48
        for e in range(256):
            j, c, l = e // 32, e // 64, e % 32
            if j < 4:
                sc, m = s[j] & 63, s[j + 4] & 63
            else:
                sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4)
                m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4)
            upper = (e % 64) >= 32
            byte = blk[qs_off + 32 * c + l]
            q = byte >> 4 if upper else byte & 15
            if type_name == "Q5_K":
                q += 16 * ((blk[16 + l] >> (2 * c + (1 if upper else 0))) & 1)
            out.append(d * sc * q - dmin * m)
    elif type_name == "Q6_K":
        d = _h(blk, 208)
        for e in range(256):
            n, r = e // 128, e % 128
            k, l = r // 32, r % 32
            byte = blk[64 * n + l + 32 * (k & 1)]
            low = byte & 15 if k < 2 else byte >> 4
            high = (blk[128 + 32 * n + l] >> (2 * k)) & 3
            sc = blk[192 + e // 16]
            sc = sc - 256 if sc > 127 else sc
            out.append(d * sc * ((low | (high << 4)) - 32))
    return out


def check_dequant_vs_scalar():
    for name in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"):
        blocks = _random_blocks(name, 6)
        block = g.GGML_TYPES[g.TYPE_IDS[name]][1]
        got = g.dequantize(blocks.reshape(-1), name, 6 * block).reshape(6, block)
        want = np.array([_scalar_block(name, b) for b in blocks])
        assert np.array_equal(got, want), f"{name}: vectorised != scalar, max diff " \
                                          f"{np.max(np.abs(got - want))}"


def check_dequant_known_values():
    # Q8_0: d = 0.5, qs = -16..15 -> -8.0 .. 7.5.
    blk = _f16_bytes([0.5]) + np.arange(-16, 16, dtype=np.int8).tobytes()
    got = g.dequantize(np.frombuffer(blk, np.uint8), "Q8_0", 32)
    assert np.array_equal(got, np.arange(-16, 16) * 0.5), got
    # Q4_0: d = 2, qs[j] = j | (15 - j) << 4 -> element j = 2(j-8), element j+16 = 2(7-j).
    qs = bytes(j | ((15 - j) << 4) for j in range(16))
    got = g.dequantize(np.frombuffer(_f16_bytes([2.0]) + qs, np.uint8), "Q4_0", 32)
    want = np.concatenate([2.0 * (np.arange(16) - 8), 2.0 * (7 - np.arange(16))])
    assert np.array_equal(got, want), got
    # Q4_K sub-block 5 (j >= 4 packing): sc = 0x3 | (2 << 4) = 35, m = 0x1 | (1 << 4) = 17.
    s = [0] * 12
    s[9] = 0x3 | (0x1 << 4)
    s[1] = 2 << 6
    s[5] = 1 << 6
    blk = _f16_bytes([1.0, 0.5]) + bytes(s) + bytes([0x21] * 128)  # low nibble 1, high 2
    got = g.dequantize(np.frombuffer(blk, np.uint8), "Q4_K", 256)
    # Sub-block 5 = elements 160..191: c = 2, upper half -> high nibble 2: 35*2 - 0.5*17.
    assert np.all(got[160:192] == 35 * 2 - 0.5 * 17), got[160:192]
    # BF16 / F16 / F32.
    vals = np.array([1.0, -2.5, 3.140625, 0.0], np.float32)
    bf16 = (vals.view(np.uint32) >> 16).astype("<u2").tobytes()
    assert np.array_equal(g.dequantize(np.frombuffer(bf16, np.uint8), "BF16", 4), vals)
    assert np.array_equal(g.dequantize(np.frombuffer(_f16_bytes(vals), np.uint8), "F16", 4), vals)
    assert np.array_equal(g.dequantize(np.frombuffer(vals.tobytes(), np.uint8), "F32", 4), vals)


def _gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def build_gguf(tensors, kvs=None, alignment=32):
    """A GGUF v3 file as bytes. tensors: [(name, ne, type name or id, raw bytes[, offset])]
    (offset overrides the packed one); kvs: [(key, value type id, encoded value bytes)]."""
    kvs = kvs or []
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
    for key, vtype, payload in kvs:
        out += _gguf_string(key) + struct.pack("<I", vtype) + payload
    offset = 0
    for name, ne, tname, raw, *forced in tensors:
        tid = g.TYPE_IDS[tname] if isinstance(tname, str) else tname
        out += _gguf_string(name) + struct.pack("<I", len(ne))
        out += b"".join(struct.pack("<Q", n) for n in ne)
        out += struct.pack("<IQ", tid, forced[0] if forced else offset)
        offset += -(-len(raw) // alignment) * alignment
    out += bytes(-len(out) % alignment)
    for _, _, _, raw, *_ in tensors:
        out += raw + bytes(-len(raw) % alignment)
    return bytes(out)


def _sample_file():
    strings = ["a", "▁b", ""]
    kvs = [
        ("general.architecture", 8, _gguf_string("gemma4")),
        ("t.u8", 0, struct.pack("<B", 200)), ("t.i8", 1, struct.pack("<b", -5)),
        ("t.u16", 2, struct.pack("<H", 60000)), ("t.i16", 3, struct.pack("<h", -300)),
        ("t.u32", 4, struct.pack("<I", 4000000000)), ("t.i32", 5, struct.pack("<i", -7)),
        ("t.f32", 6, struct.pack("<f", 0.25)), ("t.bool", 7, b"\x01"),
        ("t.u64", 10, struct.pack("<Q", 1 << 40)), ("t.i64", 11, struct.pack("<q", -(1 << 40))),
        ("t.f64", 12, struct.pack("<d", 1e-300)),
        ("t.arr_i32", 9, struct.pack("<IQ", 5, 3) + struct.pack("<3i", 1, -2, 3)),
        ("t.arr_bool", 9, struct.pack("<IQ", 7, 2) + b"\x01\x00"),
        ("t.arr_str", 9, struct.pack("<IQ", 8, 3) + b"".join(_gguf_string(s) for s in strings)),
    ]
    mat = np.arange(6, dtype=np.float32).reshape(2, 3)  # ne = [3, 2]
    q8 = _random_blocks("Q8_0", 4)  # ne = [64, 2]
    ids = np.array([5, -1, 7], "<i4")
    tensors = [("m", [3, 2], "F32", mat.tobytes()), ("q", [64, 2], "Q8_0", q8.tobytes()),
               ("ids", [3], "I32", ids.tobytes())]
    return build_gguf(tensors, kvs), mat, q8, ids


def _write(data):
    fd, path = tempfile.mkstemp(suffix=".gguf")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


def check_reader_roundtrip():
    data, mat, q8, ids = _sample_file()
    path = _write(data)
    try:
        f = g.GGUFFile(path)
        md = f.metadata
        assert md["general.architecture"] == "gemma4"
        assert (md["t.u8"], md["t.i8"], md["t.u16"], md["t.i16"]) == (200, -5, 60000, -300)
        assert (md["t.u32"], md["t.i32"], md["t.f32"], md["t.bool"]) == (4000000000, -7, 0.25, True)
        assert (md["t.u64"], md["t.i64"], md["t.f64"]) == (1 << 40, -(1 << 40), 1e-300)
        assert list(md["t.arr_i32"]) == [1, -2, 3] and list(md["t.arr_bool"]) == [True, False]
        assert md["t.arr_str"] == ["a", "▁b", ""]
        assert f.tensors["m"].shape == (2, 3) and np.array_equal(f.tensor("m"), mat)
        want_q = g.dequant_q8_0(q8).reshape(2, 64)
        assert np.array_equal(f.tensor("q"), want_q)
        assert np.array_equal(f.rows("q", [1]), want_q[1:2])
        assert np.array_equal(f.tensor("ids"), ids) and f.tensor("ids").dtype == np.int64
    finally:
        os.unlink(path)


def _expect_error(data, what):
    path = _write(data)
    try:
        g.GGUFFile(path)
    except g.GGUFError as e:
        assert path in str(e), f"{what}: message does not name the file: {e}"
        return str(e)
    finally:
        os.unlink(path)
    raise AssertionError(f"{what}: no GGUFError")


def check_reader_rejects_bad_files():
    data, _, _, ids = _sample_file()
    # Every truncation of the header, tensor infos or tensor bytes (not merely the zero padding
    # after the last tensor) must raise GGUFError, not crash.
    for cut in range(0, len(data) - (-ids.nbytes % 32), 7):
        _expect_error(data[:cut], f"truncated at {cut}")
    msg = _expect_error(b"GGUX" + data[4:], "bad magic")
    assert "magic" in msg and "byte offset 0" in msg, msg
    assert "version" in _expect_error(data[:4] + struct.pack("<I", 4) + data[8:], "version 4")
    bad_type = build_gguf([("x", [4], 77, bytes(16))])
    assert "type id 77" in _expect_error(bad_type, "unknown type")
    misaligned = build_gguf([("x", [4], "F32", bytes(16), 4)])
    assert "'x'" in _expect_error(misaligned, "misaligned offset")
    past_end = build_gguf([("x", [4], "F32", bytes(16), 64)])
    assert "past the file end" in _expect_error(past_end, "data past the end")
    bad_block = build_gguf([("x", [33], "Q8_0", bytes(68))])
    assert "block size" in _expect_error(bad_block, "ne0 not a block multiple")
    dup = build_gguf([], [("k", 4, struct.pack("<I", 1)), ("k", 4, struct.pack("<I", 2))])
    assert "duplicate" in _expect_error(dup, "duplicate key")
    nested = build_gguf([], [("k", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 0))])
    assert "nested" in _expect_error(nested, "nested array")


CHECKS = [check_dequant_vs_scalar, check_dequant_known_values, check_reader_roundtrip,
          check_reader_rejects_bad_files]
