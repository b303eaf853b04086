#!/usr/bin/env python3
# Time to first token of one 672x960 PNG (280 soft tokens in transformers' and llama.cpp's rules) plus
# a text prompt, n_predict 1, against a running server's /completion: tandem (form "tandem") or
# llama-server (form "llama", started with LLAMA_MEDIA_MARKER='<__media__>'). Each request has
# another image, so no cache serves it. WORDS (default 100) words of text follow the image; with 0
# the prompt is the image alone, and 1 / TTFT is the images per second the server takes in.
# Usage: image_ttft.py PORT tandem|llama N [WORDS]
import base64, io, json, sys, time, urllib.request
from PIL import Image
port, form, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
words = int(sys.argv[4]) if len(sys.argv) > 4 else 100
def png(seed):
    im = Image.new('RGB', (672, 960))
    px = im.load()
    for y in range(0, 960, 4):
        for x in range(0, 672, 4):
            c = ((x * 7 + seed * 31) % 256, (y * 5 + seed * 17) % 256, ((x ^ y) + seed) % 256)
            for dy in range(4):
                for dx in range(4):
                    px[x + dx, y + dy] = c
    b = io.BytesIO(); im.save(b, 'PNG'); return base64.b64encode(b.getvalue()).decode()
text = ' '.join(['word%d' % i for i in range(words)])
for i in range(n):
    data = png(i + 1 + 1000 * words)  # another image for every request and every WORDS
    prompt = '<__media__>' + (' ' + text if text else '')
    if form == 'llama':
        body = {'prompt': {'prompt_string': prompt, 'multimodal_data': [data]}, 'n_predict': 1, 'cache_prompt': False, 'temperature': 0}
    else:
        body = {'prompt': prompt, 'multimodal_data': [data], 'n_predict': 1, 'temperature': 0}
    req = urllib.request.Request('http://127.0.0.1:%d/completion' % port, data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    t0 = time.time()
    r = json.load(urllib.request.urlopen(req, timeout=600))
    dt = time.time() - t0
    print(json.dumps({'wall_ms': round(dt * 1000, 1), 'prompt_n': r.get('timings', {}).get('prompt_n'), 'prompt_ms': r.get('timings', {}).get('prompt_ms'), 'image_encode_ms': r.get('timings', {}).get('image_encode_ms')}))
