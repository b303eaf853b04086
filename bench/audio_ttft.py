#!/usr/bin/env python3
# Time to first token of one recording (SECONDS long, default 30: 750 soft tokens) plus a short
# text prompt, n_predict 1, against a running server's /completion: tandem (form "tandem") or
# llama-server (form "llama", started with LLAMA_MEDIA_MARKER='<__media__>'). Each request has
# another recording (a swept tone with seeded noise, 16 kHz mono 16-bit WAV), so no cache serves
# it. The encoder's real-time factor is SECONDS / encode time: tandem reports the encode in
# timings.audio_encode_ms; llama-server logs it ("audio slice encoded in N ms" lines in its log).
# Usage: audio_ttft.py PORT tandem|llama N [SECONDS [SEED]] (SEED: the first recording's; default
# from the clock, so that a second run does not repeat the first's recordings)
import base64, io, json, math, random, struct, sys, time, urllib.request, wave
port, form, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 30.0
seed0 = int(sys.argv[5]) if len(sys.argv) > 5 else int(time.time() * 1000) % 1000000007
def wav(seed):
    rng = random.Random(seed)
    rate, count = 16000, int(seconds * 16000)
    out = bytearray()
    for i in range(count):
        t = i / rate
        v = 0.2 * math.sin(2 * math.pi * 300 * t * (1 + 0.3 * math.sin(t + seed))) + 0.05 * rng.gauss(0, 1)
        out += struct.pack('<h', max(-32767, min(32767, int(v * 32767))))
    b = io.BytesIO()
    w = wave.open(b, 'wb'); w.setnchannels(1); w.setsampwidth(2); w.setframerate(rate)
    w.writeframes(bytes(out)); w.close()
    return base64.b64encode(b.getvalue()).decode()
for i in range(n):
    data = wav(seed0 + i)
    prompt = 'Transcribe: <__media__>'
    if form == 'llama':
        body = {'prompt': {'prompt_string': prompt, 'multimodal_data': [data]}, 'n_predict': 1, 'cache_prompt': False, 'temperature': 0}
    else:
        body = {'prompt': prompt, 'multimodal_data': [data], 'n_predict': 1, 'temperature': 0}
    req = urllib.request.Request('http://127.0.0.1:%d/completion' % port, data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    t0 = time.time()
    r = json.load(urllib.request.urlopen(req, timeout=900))
    dt = time.time() - t0
    t = r.get('timings', {})
    print(json.dumps({'wall_ms': round(dt * 1000, 1), 'prompt_n': t.get('prompt_n'), 'prompt_ms': t.get('prompt_ms'), 'audio_encode_ms': t.get('audio_encode_ms')}), flush=True)
