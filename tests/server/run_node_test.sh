#!/usr/bin/env bash
# Runs one node test file of tests/node against `tandem serve` (ctest entry point). Exits 77
# (ctest SKIP_RETURN_CODE) when node or the npm packages are missing: `npm ci` in tests/node
# (scripts/install-deps.sh does it) installs them.
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
exec node --test --test-reporter=spec "$test_file"
