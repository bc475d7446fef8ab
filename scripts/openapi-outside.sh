#!/usr/bin/env bash
# /openapi.json as tools outside the project see it: start the real server (PGlite, a temporary
# data directory), lint its document with Redocly and Spectral's spectral:oas ruleset (0 errors
# each; warnings are printed), then generate the Python client (examples/python/generate.sh,
# openapi-python-client from PyPI in a venv) and run examples/python/example.py against it.
# The linters are installed, pinned, under a temporary folder, never into the project.
#   bash scripts/openapi-outside.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REDOCLY_VERSION=2.77.0
SPECTRAL_VERSION=6.16.3
WORK=$(mktemp -d /tmp/arbor-openapi-outside.XXXXXX)
SERVER_PID=''
cleanup() {
  local rc=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  [ "$rc" = 0 ] || { echo '--- server log'; tail -n 40 "$WORK/server.log" 2>/dev/null || true; }
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
ADMIN_TOKEN=$(node -e "console.log(require('crypto').randomBytes(24).toString('hex'))")
BASE="http://127.0.0.1:$PORT"
env -u DATABASE_URL PORT="$PORT" HOST=127.0.0.1 ADMIN_TOKEN="$ADMIN_TOKEN" PUBLIC_BASE_URL="$BASE" DATA_DIR="$WORK/data" \
  "$ROOT/node_modules/.bin/bun" src/main.ts >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
node -e "
  const until = Date.now() + 240_000
  const poll = async () => {
    try { if ((await fetch('$BASE/healthz')).status === 200) return } catch {}
    try { process.kill($SERVER_PID, 0) } catch { console.error('the server exited before it answered /healthz'); process.exit(1) }
    if (Date.now() > until) { console.error('the server did not answer /healthz within 240 s'); process.exit(1) }
    setTimeout(poll, 200)
  }
  poll()
"
node -e "fetch('$BASE/openapi.json').then(r => r.text()).then(t => require('fs').writeFileSync('$WORK/openapi.json', t))"

echo "==> Redocly $REDOCLY_VERSION and Spectral $SPECTRAL_VERSION (spectral:oas): 0 errors each"
npm install --prefix "$WORK/lint" --no-audit --no-fund --loglevel=error \
  "@redocly/cli@$REDOCLY_VERSION" "@stoplight/spectral-cli@$SPECTRAL_VERSION" >/dev/null
# the recommended rules; exits non-zero on any error
(cd "$WORK" && "$WORK/lint/node_modules/.bin/redocly" lint openapi.json --format=summary 2>&1 | grep -v '[║╔╚]')
echo 'extends: ["spectral:oas"]' >"$WORK/.spectral.yaml"
# one run: its report counted, its exit code (non-zero on any error) kept
spectral_rc=0
(cd "$WORK" && "$WORK/lint/node_modules/.bin/spectral" lint openapi.json -r .spectral.yaml --fail-severity error --format text >"$WORK/spectral.txt") || spectral_rc=$?
awk '/ error /{e++} / warning /{w++} END {printf "spectral: %d errors, %d warnings\n", e, w}' "$WORK/spectral.txt"
if [ "$spectral_rc" != 0 ]; then grep ' error ' "$WORK/spectral.txt" | head -n 40; exit "$spectral_rc"; fi

echo '==> the Python client (examples/python/generate.sh) and its example against the server'
KEY=$(node -e "
  fetch('$BASE/admin/v1/users', { method: 'POST', headers: { authorization: 'Bearer $ADMIN_TOKEN', 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'python', tier: 'team' }) }).then(r => r.json()).then(b => console.log(b.apiKey))
")
ARBOR_API_URL="$BASE" bash examples/python/generate.sh "$WORK/venv"
ARBOR_API_URL="$BASE" ARBOR_API_KEY="$KEY" "$WORK/venv/bin/python" examples/python/example.py
