#!/usr/bin/env bash
# Regenerates the client-written seeds of corpus/fuzz_multipart/ (not run by the tests): bodies
# that real encoders wrote, which src/server/multipart_form_test.cpp also parses as its
# independent truth (the inputs below are the ones that test expects). Each file is the
# Content-Type value, "\n", then the body.
#   curl.form                 curl -F, captured by a one-shot loopback listener
#   urllib3.form              Python's urllib3.encode_multipart_formdata (what requests uses)
#   openai_form_data.form     the openai npm package (tests/node, pinned), a File: undici's FormData
#   openai_streaming.form     the same package, fs.createReadStream: its own encoder
#   openai_translation.form   the same package, audio.translations.create
# The hand-written seeds (bad_*.form, edge_*.form) are kept as they are.
# Needs curl, /usr/bin/python3 with urllib3, node with `npm ci` done in tests/node.
# Usage: tests/fuzz/make_multipart_corpus.sh [OUTPUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$(realpath -m "${1:-$root/tests/fuzz/corpus/fuzz_multipart}")"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The audio every client sends: bytes a naive parser trips on (CRLF, "--", NUL, 0xff).
printf 'RIFF\x24\x00\x00\x00WAVE\r\n--\r\n\x00\xff\r\n' >"$work/clip.wav"

# curl: a loopback listener that answers once and writes what it received.
python3 - "$work/curl.form" >"$work/port" <<'EOF' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
data = b""
while b"\r\n\r\n" not in data:
    data += c.recv(65536)
head, body = data.split(b"\r\n\r\n", 1)
headers = dict(l.split(b": ", 1) for l in head.split(b"\r\n")[1:])
while len(body) < int(headers[b"Content-Length"]):
    body += c.recv(65536)
c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
c.close()
open(sys.argv[1], "wb").write(headers[b"Content-Type"] + b"\n" + body)
EOF
listener=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
(cd "$work" && curl -sS -o /dev/null -F 'file=@clip.wav;type=audio/wav' -F model=whisper-1 \
  -F 'prompt=Say "hi"' -F 'timestamp_granularities[]=segment' -F response_format=verbose_json \
  -F 'extra=@clip.wav;filename=q"u.wav' "http://127.0.0.1:$(cat "$work/port")/v1/audio/transcriptions")
wait "$listener"
cp "$work/curl.form" "$out/curl.form"

/usr/bin/python3 - "$work/clip.wav" "$out/urllib3.form" <<'EOF'
import sys
from urllib3 import encode_multipart_formdata
audio = open(sys.argv[1], "rb").read()
body, content_type = encode_multipart_formdata([
    ("file", ("grüße \"1\".mp3", audio, "audio/mpeg")),
    ("model", "whisper-1"),
    ("language", "de"),
    ("prompt", "Grüße\r\nzwei Zeilen"),
    ("timestamp_granularities[]", "segment"),
])
open(sys.argv[2], "wb").write(content_type.encode() + b"\n" + body)
EOF

(cd "$root/tests/node" && node multipart_capture.mjs "$work/clip.wav" "$out")
