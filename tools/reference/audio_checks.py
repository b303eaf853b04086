"""Self-checks of the audio front end (audio.py), part of test_reference.py.

They need nothing but NumPy: each compares audio.py with a slower or closed-form computation of
the same fact, so that the reference the C++ tests trust is itself checked.
"""

import numpy as np

import audio


def check_audio_frame_counts():
    for n, frames in [(0, 0), (160, 0), (161, 1), (320, 1), (321, 2), (16000, 99), (480000, 2999)]:
        assert audio.frame_count(n) == frames, (n, audio.frame_count(n), frames)
        assert len(audio.log_mel(np.zeros(n))) == frames


def check_audio_filter_bank():
    """Adjacent triangles overlap so that, between the centres of the first and the last
    filter, the weights at every bin sum to one; each filter peaks at its centre."""
    bank = audio.mel_filter_bank()
    assert bank.shape == (257, 128)
    edges = audio.mel_to_hertz(np.linspace(0.0, audio.hertz_to_mel(8000.0), 130))
    hz = np.arange(257) * 31.25
    inside = (hz >= edges[1]) & (hz <= edges[128])
    assert np.allclose(bank[inside].sum(axis=1), 1.0, atol=1e-12)
    assert abs(audio.hertz_to_mel(1000.0) - 1000.0) < 0.1  # HTK: 1000 Hz is about 1000 mel


def check_audio_log_mel_by_hand():
    """One frame by the DFT's definition, the window and the filters written out again."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1000) * 0.1
    got = audio.log_mel(x, "add")
    for i in (0, 3):
        frame = np.zeros(512)
        for n in range(320):
            j = 160 * i + n - 160
            frame[n] = (x[j] if j >= 0 else 0.0) * (0.5 - 0.5 * np.cos(2 * np.pi * n / 320))
        k = np.arange(257)[:, None]
        spectrum = np.abs(np.exp(-2j * np.pi * k * np.arange(512)[None, :] / 512) @ frame)
        want = np.log(spectrum @ audio.mel_filter_bank() + 1e-3)
        assert np.allclose(got[i], want, atol=1e-12), np.abs(got[i] - want).max()
    clamp = audio.log_mel(x, "clamp")
    assert np.all(clamp <= got + 1e-15) and np.all(clamp >= np.log(1e-3) - 1e-15)


def check_audio_chunks():
    x = np.sin(np.arange(2 * audio.CHUNK + 500) * 0.2)
    chunks = audio.log_mel_chunks(x)
    assert [len(c) for c in chunks] == [2999, 2999, 3]
    assert np.array_equal(chunks[1], audio.log_mel(x[audio.CHUNK:2 * audio.CHUNK]))
    assert [len(c) for c in audio.log_mel_chunks(x, long_audio="truncate")] == [2999]
    assert [len(c) for c in audio.log_mel_chunks(x[:audio.CHUNK + 100])] == [2999]


CHECKS = [check_audio_frame_counts, check_audio_filter_bank, check_audio_log_mel_by_hand,
          check_audio_chunks]
