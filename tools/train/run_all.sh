#!/bin/bash
# Runs the whole training pipeline, one script per step (tools/train/README.md):
#   corpus -> tokenizer -> target -> assistant -> export (HF layout, tandem convert + quantize).
#
#   tools/train/run_all.sh [--smoke] [WORK_DIR [OUT_DIR]]
#
# WORK_DIR (default models/train-work) gets the corpus, tokenizer, checkpoints, logs and the HF
# export; OUT_DIR (default models, or WORK_DIR/models with --smoke) gets the GGUFs.
# Environment: TANDEM (the tandem binary, default build/tandem), THREADS (default 2),
# TARGET_MINUTES (45), ASSISTANT_MINUTES (30), QUANT (Q8_0), PYTHON (/usr/bin/python3).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
SMOKE=0
if [[ "${1:-}" == "--smoke" ]]; then
  SMOKE=1
  shift
fi
WORK="${1:-$REPO/models/train-work}"
if [[ $SMOKE == 1 ]]; then OUT="${2:-$WORK/models}"; else OUT="${2:-$REPO/models}"; fi
PY="${PYTHON:-/usr/bin/python3}"
TANDEM="${TANDEM:-$REPO/build/tandem}"
THREADS="${THREADS:-2}"
QUANT="${QUANT:-Q8_0}"

if [[ ! -x "$TANDEM" ]]; then
  echo "run_all.sh: $TANDEM not found: build it (make) or set TANDEM" >&2
  exit 1
fi
mkdir -p "$WORK"
step() { echo "== $* ($(date +%H:%M:%S))"; }
start=$(date +%s)

if [[ $SMOKE == 1 ]]; then
  step corpus
  "$PY" "$HERE/corpus.py" --smoke --out "$WORK/corpus"
  step tokenizer
  "$PY" "$HERE/tokenizer.py" train --corpus "$WORK/corpus" --out "$WORK/tokenizer" \
    --vocab-size 1024 --sample-mb 0.4
  step target
  "$PY" "$HERE/train_target.py" --work "$WORK" --smoke --threads "$THREADS"
  step assistant
  "$PY" "$HERE/train_assistant.py" --work "$WORK" --smoke --threads "$THREADS"
  step export
  "$PY" "$HERE/export.py" --work "$WORK" --out-dir "$OUT" --tandem "$TANDEM" --dtype f32 \
    --quant "$QUANT" --name smoke
else
  step corpus
  "$PY" "$HERE/corpus.py" --out "$WORK/corpus"
  step tokenizer
  "$PY" "$HERE/tokenizer.py" train --corpus "$WORK/corpus" --out "$WORK/tokenizer" \
    --vocab-size 4096 --sample-mb 3
  step target
  nice -n 5 "$PY" "$HERE/train_target.py" --work "$WORK" --threads "$THREADS" \
    --max-minutes "${TARGET_MINUTES:-45}"
  step assistant
  nice -n 5 "$PY" "$HERE/train_assistant.py" --work "$WORK" --threads "$THREADS" \
    --max-minutes "${ASSISTANT_MINUTES:-30}"
  step export
  "$PY" "$HERE/export.py" --work "$WORK" --out-dir "$OUT" --tandem "$TANDEM" --dtype bf16 \
    --quant "$QUANT"
fi
echo "== done in $(( $(date +%s) - start )) s: GGUFs in $OUT, logs in $WORK"
