#!/usr/bin/env bash
# `make run`: the main job on the bundled default model. Until the trained pair ships (and the
# forward pass lands), it generates a tiny random Gemma 4 model with tandem and inspects it.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
mkdir -p "$BUILD/models"
model="$BUILD/models/tiny-e2b-q8_0.gguf"
"$BUILD/tandem" mkmodel --config tiny-e2b --type q8_0 -o "$model"
"$BUILD/tandem" inspect "$model"
