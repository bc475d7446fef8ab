#!/usr/bin/env bash
# Regenerate generated/arbor.ts, the API's types, from the OpenAPI document the real app serves
# (built in-process by openapi-spec.ts, no server needed), with openapi-typescript.
#   npm run client:generate            (from the repository root)
# The generator is a project of its own (generator/, its own lockfile): openapi-typescript prints
# through the TypeScript 5 compiler API, which the root's TypeScript 7 (native) does not have.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
if [ ! -x generator/node_modules/.bin/openapi-typescript ]; then
  npm ci --prefix generator --no-audit --no-fund --ignore-scripts >/dev/null
fi
SPEC=$(mktemp /tmp/arbor-openapi.XXXXXX.json)
trap 'rm -f "$SPEC"' EXIT
"$ROOT/node_modules/.bin/bun" openapi-spec.ts "$SPEC"
generator/node_modules/.bin/openapi-typescript "$SPEC" -o generated/arbor.ts --alphabetize >/dev/null
# in the repository's style, so the lint run sees a formatted file
"$ROOT/node_modules/.bin/biome" format --write generated/arbor.ts >/dev/null 2>&1
echo "generated/arbor.ts: $(wc -c <generated/arbor.ts) bytes"
