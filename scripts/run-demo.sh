#!/usr/bin/env bash
# `make run`: the main job. Until the trained pair ships (models/), it generates a tiny random
# Gemma 4 target and its MTP assistant with tandem, then generates with MTP speculation on and
# prints the timings and speculative statistics. (Random weights: the text means nothing.)
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
mkdir -p "$BUILD/models"
target="$BUILD/models/tiny-e2b-q8_0.gguf"
assistant="$BUILD/models/tiny-e2b-assistant-q8_0.gguf"
[ -f "$target" ] || "$BUILD/tandem" mkmodel --config tiny-e2b --type q8_0 -o "$target"
[ -f "$assistant" ] || "$BUILD/tandem" mkmodel --config tiny-e2b --assistant --type q8_0 -o "$assistant"
"$BUILD/tandem" run -m "$target" -md "$assistant" -n 64 --temp 0 \
  -p "The people who built the model wanted to know the answer."
