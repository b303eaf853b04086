#!/usr/bin/env bash
# Runs one node test file of tests/node against `tandem serve` (ctest entry point). Exits 77
# (ctest SKIP_RETURN_CODE) when node or the npm packages are missing (`npm ci` in tests/node,
# scripts/install-deps.sh does it, installs them), and for a suite comparing with llama-server
# when the peer build cannot run.
set -euo pipefail
node_dir=$1
test_file=$2
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node is not installed"
  exit 77
fi
for pkg in openai @anthropic-ai/sdk; do
  if [ ! -f "$node_dir/node_modules/$pkg/package.json" ]; then
    echo "skipped: $node_dir/node_modules/$pkg is missing (run npm ci in $node_dir)"
    exit 77
  fi
done
# The browser tests (web_*.test.mjs) drive Chromium through puppeteer-core.
if [[ $(basename "$test_file") == web_* ]]; then
  chromium=${CHROMIUM:-/usr/bin/chromium}
  if [ ! -x "$chromium" ]; then
    echo "skipped: $chromium is not installed (Debian package chromium)"
    exit 77
  fi
  if [ ! -f "$node_dir/node_modules/puppeteer-core/package.json" ]; then
    echo "skipped: $node_dir/node_modules/puppeteer-core is missing (run npm ci in $node_dir)"
    exit 77
  fi
fi
cd "$node_dir"
# The suites comparing with llama-server (*_llamacpp.test.mjs) need the peer build (peer.mjs:
# ../shared/peer beside the repository, or TANDEM_PEER_BIN).
if [[ $(basename "$test_file") == *_llamacpp.test.mjs ]]; then
  if ! why=$(node peer_usable.mjs); then
    echo "skipped: $why"
    exit 77
  fi
fi
exec node --test --test-reporter=spec "$test_file"
