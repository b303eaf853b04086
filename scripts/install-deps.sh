#!/usr/bin/env bash
# Installs exactly what tandem's build and tests need and is missing (Debian 12 packages, then the
# npm packages the test suites use). Idempotent, and silent when nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(
  build-essential cmake g++ make pkg-config git ccache
  clang libclang-rt-14-dev          # libFuzzer + sanitizer runtimes for the fuzz run
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev
  libpng-dev libjpeg62-turbo-dev libwebp-dev libexif-dev  # image input (src/media)
  libsndfile1-dev libsoxr-dev       # audio input (src/media): WAV/FLAC/Ogg/MP3 decoding, resampling
  python3-pil                       # Pillow: the byte-exact oracle of the image resize tests
  python3 python3-numpy             # the independent NumPy reference (tools/reference)
  python3-torch libopenblas0-pthread  # the PyTorch training model (tools/train) and its tests
  chromium                          # the web page's browser test (puppeteer-core drives it)
  haproxy                           # the load-balancer test in front of two servers
)
# Node.js and npm (real-client and tokenizer-parity tests in tests/node): machines that already
# have them from elsewhere keep theirs; Debian's packages otherwise.
command -v node >/dev/null 2>&1 || DEBIAN_PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || DEBIAN_PACKAGES+=(npm)

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages for the node test suites, pinned by tests/node/package-lock.json.
if [ -f tests/node/package.json ]; then
  if [ ! -d tests/node/node_modules ] || [ tests/node/package.json -nt tests/node/node_modules ]; then
    echo "install-deps: installing npm packages for tests/node"
    (cd tests/node && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
fi
