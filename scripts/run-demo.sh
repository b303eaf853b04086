#!/usr/bin/env bash
# `make run`: the main job. Generates with the bundled trained pair (models/: a small Gemma 4
# target trained on Python's standard library source, and its MTP assistant with a centroid
# head), greedy, MTP speculation on (adaptive draft length), and prints the timings and the
# speculative statistics.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
target=models/tandem-gemma4-tiny-Q8_0.gguf
assistant=models/tandem-gemma4-tiny-assistant-Q8_0.gguf
for f in "$target" "$assistant"; do
  [ -f "$f" ] || { echo "run-demo: $f is missing (it ships in the repository)" >&2; exit 1; }
done
# A fixed draft length of 4: on a pair this small a draft step costs half a target step, so
# the adaptive controller (the default) mostly decodes plainly; models/README.md has the numbers.
"$BUILD/tandem" run -m "$target" -md "$assistant" -n 160 --temp 0 --draft-max 4 --no-adaptive \
  -p $'import os\n\n\ndef read_lines(path):\n    """Return the lines of the file at path."""\n'
echo "Chat with this pair in your browser, with a live speculation panel:"
echo "  $BUILD/tandem serve -m $target -md $assistant"
echo "then open http://127.0.0.1:8080/ (--draft-max 4 --no-adaptive drafts every round as above;"
echo "--port N for another port; --host and --api-key to share it)."
