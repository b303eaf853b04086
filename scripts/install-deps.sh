#!/usr/bin/env bash
# Installs what tandem needs and is missing (Debian 12 packages, then the npm packages the test
# suites use). Idempotent, and silent when nothing is missing.
#   install-deps.sh run    what building the `tandem` binary and running it need (`make run`)
#   install-deps.sh test   that and everything the tests, benchmarks and fuzzers need (`make test`;
#                          the default)
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-test}
case "$MODE" in
  run | test) ;;
  *)
    echo "install-deps: unknown mode '$MODE' (run | test)" >&2
    exit 2
    ;;
esac

# Building and running `tandem`. CMake's configure step needs GoogleTest even for the one binary:
# the unit tests are declared beside the code they test (headers and static libraries, nothing
# compiled for `make run`).
RUN_PACKAGES=(
  build-essential cmake g++ make pkg-config git ccache
  nlohmann-json3-dev libcli11-dev
  libpng-dev libjpeg62-turbo-dev libwebp-dev libexif-dev  # image input (src/media)
  libsndfile1-dev libsoxr-dev       # audio input (src/media): WAV/FLAC/Ogg/MP3 decoding, resampling
  libgtest-dev libgmock-dev         # configure needs them (see above)
)
# Tests, benchmarks and fuzzers only.
TEST_PACKAGES=(
  clang libclang-rt-14-dev          # libFuzzer + sanitizer runtimes for the fuzz run
  libbenchmark-dev                  # the Google Benchmark programs (bench/)
  python3-pil                       # Pillow: the byte-exact oracle of the image resize tests
  python3 python3-numpy             # the independent NumPy reference (tools/reference)
  python3-torch libopenblas0-pthread  # the PyTorch training model (tools/train) and its tests
  python3-jinja2                    # renders the trained pair's chat template in tools/train's test
  chromium                          # the web page's browser test (puppeteer-core drives it)
  haproxy                           # the load-balancer test in front of two servers
  espeak-ng flac lame               # speech, FLAC and MP3 recordings for server_audio_llamacpp
)
# Node.js and npm (real-client and tokenizer-parity tests in tests/node): machines that already
# have them from elsewhere keep theirs; Debian's packages otherwise.
command -v node >/dev/null 2>&1 || TEST_PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || TEST_PACKAGES+=(npm)

DEBIAN_PACKAGES=("${RUN_PACKAGES[@]}")
[ "$MODE" = run ] || DEBIAN_PACKAGES+=("${TEST_PACKAGES[@]}")

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

[ "$MODE" = run ] && exit 0
# npm packages for the node test suites, pinned by tests/node/package-lock.json.
if [ -f tests/node/package.json ]; then
  if [ ! -d tests/node/node_modules ] || [ tests/node/package.json -nt tests/node/node_modules ]; then
    echo "install-deps: installing npm packages for tests/node"
    (cd tests/node && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
fi
