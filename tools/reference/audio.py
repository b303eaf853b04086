"""Float64 NumPy reference of Gemma 4's audio front end (the log-mel features of "gemma4a").

Written from the description of transformers' Gemma4AudioFeatureExtractor (defaults: 16 kHz,
20 ms frames, 10 ms hop, 128 mel bins over 0..8000 Hz, no pre-emphasis, no dither, mel floor
0.001, no per-bin normalisation) and of llama.cpp's 30 s chunking (docs/media.md § Audio):

  x' = [0]*160 ++ x                                   "semicausal" left padding
  frame i = x'[160 i : 160 i + 320] * hann_periodic(320)
  S = |rfft(frame, n=512)|                            [F, 257], magnitude (not power)
  M = S @ mel_filter_bank()                           [F, 128], HTK mel, triangles in Hz
  out = ln(M + 0.001)        (transformers)   or   ln(max(M, 0.001))   (llama.cpp)

F keeps only frames whose 321-sample unfold window ends on a real sample (the frames
transformers' mask keeps): F = floor((N - 161) / 160) + 1 for N >= 161.
"""

import wave

import numpy as np

SAMPLE_RATE = 16000
FRAME = 320
HOP = 160
FFT = 512
MELS = 128
FLOOR = 1e-3
CHUNK = 30 * SAMPLE_RATE
LOG_FLOORS = ("add", "clamp")
LONG_AUDIO = ("chunk", "truncate")


def hertz_to_mel(f):
    return 2595.0 * np.log10(1.0 + np.asarray(f, np.float64) / 700.0)


def mel_to_hertz(m):
    return 700.0 * (10.0 ** (np.asarray(m, np.float64) / 2595.0) - 1.0)


def mel_filter_bank(n_mels=MELS, n_fft=FFT, sample_rate=SAMPLE_RATE, f_min=0.0, f_max=8000.0):
    """[n_fft/2 + 1, n_mels]: triangles between mel-spaced edges, evaluated at the bin
    frequencies in Hz, peak 1, no area normalisation."""
    bins = np.linspace(0.0, sample_rate // 2, n_fft // 2 + 1)
    edges = mel_to_hertz(np.linspace(hertz_to_mel(f_min), hertz_to_mel(f_max), n_mels + 2))
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    rising = (bins[:, None] - lower[None, :]) / (center - lower)[None, :]
    falling = (upper[None, :] - bins[:, None]) / (upper - center)[None, :]
    return np.maximum(0.0, np.minimum(rising, falling))


def frame_count(n):
    return 0 if n < FRAME // 2 + 1 else (n - (FRAME // 2 + 1)) // HOP + 1


def log_mel(samples, log_floor="add"):
    """[F, 128] float64 log-mel of one clip of 16 kHz mono samples."""
    if log_floor not in LOG_FLOORS:
        raise ValueError(f"log floor must be one of {LOG_FLOORS}")
    x = np.concatenate([np.zeros(FRAME // 2), np.asarray(samples, np.float64)])
    f = frame_count(len(samples))
    if f == 0:
        return np.zeros((0, MELS))
    n = np.arange(FRAME)
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * n / FRAME)
    index = np.arange(f)[:, None] * HOP + n[None, :]
    spectrum = np.abs(np.fft.rfft(x[index] * window, n=FFT, axis=-1))
    mel = spectrum @ mel_filter_bank()
    if log_floor == "add":
        return np.log(mel + FLOOR)
    return np.log(np.maximum(mel, FLOOR))


def log_mel_chunks(samples, log_floor="add", long_audio="chunk"):
    """One log-mel array per 30 s chunk (llama.cpp), or only the first 30 s (transformers).
    Chunks too short for a frame are left out."""
    if long_audio not in LONG_AUDIO:
        raise ValueError(f"long-audio rule must be one of {LONG_AUDIO}")
    samples = np.asarray(samples, np.float64)
    starts = range(0, len(samples), CHUNK) if long_audio == "chunk" else [0]
    chunks = [log_mel(samples[s:s + CHUNK], log_floor) for s in starts]
    return [c for c in chunks if len(c)]


def read_wav(path):
    """(samples, rate) of a 16-bit PCM WAV: s / 32768, channels averaged."""
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2:
            raise ValueError(f"{path}: only 16-bit PCM WAV is read here")
        channels, rate = w.getnchannels(), w.getframerate()
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64) / 32768.0
    return data.reshape(-1, channels).mean(axis=1), rate
