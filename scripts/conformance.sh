#!/usr/bin/env bash
# The official MCP conformance suite against the real server (issue 44): Arbor started from the
# sources on a fresh embedded database, its /mcp reached through scripts/mcp-key-proxy.ts (the
# suite cannot send the bearer key), and three runs, each held to its baseline of expected
# failures in test/conformance/ (a scenario that fails and is not listed, or is listed and
# passes, fails the run):
#   @modelcontextprotocol/conformance 0.1.16, its active suite (revision 2025-11-25)
#   the 0.2 line, --requirements 2025-11-25 and --requirements 2026-07-28
# and then the MCP Inspector's CLI with --strict on the tool list (no problem at all allowed).
# The suite needs Node.js 22: node@22 and the suites are installed into <work dir> with npm
# --prefix, outside the project's dependencies, once: a work dir that holds them is used as it is.
#
#   bash scripts/conformance.sh <work dir>
#   bash scripts/conformance.sh <work dir> --install   # only the installs (CI makes them early)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${1:?usage: bash scripts/conformance.sh <work dir>}
V1=0.1.16
V2=0.2.0-alpha.12
mkdir -p "$WORK"
SERVER_PID='' PROXY_PID=''
stop() {
  [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null || true
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
}
trap stop EXIT

[ -x "$WORK/v1/node_modules/.bin/conformance" ] ||
  npm install --prefix "$WORK/v1" --no-audit --no-fund --no-save "node@22" "@modelcontextprotocol/conformance@$V1" >/dev/null
[ -x "$WORK/inspector/node_modules/.bin/mcp-inspector" ] ||
  npm install --prefix "$WORK/inspector" --no-audit --no-fund --no-save "@modelcontextprotocol/inspector@2.12.0" >/dev/null
[ -x "$WORK/v2/node_modules/.bin/conformance" ] ||
  npm install --prefix "$WORK/v2" --no-audit --no-fund --no-save "@modelcontextprotocol/conformance@$V2" >/dev/null
NODE22="$WORK/v1/node_modules/node/bin"
if [ "${2:-}" = --install ]; then
  echo "installed in $WORK: node $("$NODE22/node" --version), conformance $V1 and $V2, MCP Inspector 2.12.0"
  exit 0
fi
echo "node $("$NODE22/node" --version) for the suite"

port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
API_PORT=$(port)
PROXY_PORT=$(port)
rm -rf "$WORK/data" && mkdir -p "$WORK/data" # a fresh database: its first start prints the owner key
# the suite sends a few hundred requests a minute from one address: no per-IP limit here
RATE_LIMIT_PER_MINUTE=0 PORT=$API_PORT DATA_DIR="$WORK/data" PUBLIC_BASE_URL="http://127.0.0.1:$API_PORT" \
  node_modules/.bin/bun src/main.ts >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
# ready when /healthz answers (CI has Node.js, not necessarily curl)
for _ in $(seq 1 120); do
  node -e "fetch('http://127.0.0.1:$API_PORT/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" && break
  sleep 0.5
done
KEY=$(sed -n 's/.*Arbor API key for owner: \(arb_[0-9A-Za-z]*\).*/\1/p' "$WORK/server.log" | head -n 1)
[ -n "$KEY" ] || { cat "$WORK/server.log"; echo 'no owner key in the server output'; exit 1; }
ARBOR_API_KEY=$KEY node_modules/.bin/bun scripts/mcp-key-proxy.ts "http://127.0.0.1:$API_PORT/mcp" "$PROXY_PORT" >"$WORK/proxy.log" 2>&1 &
PROXY_PID=$!
for _ in $(seq 1 60); do grep -q listening "$WORK/proxy.log" && break; sleep 0.2; done
URL="http://127.0.0.1:$PROXY_PORT/mcp"

rc=0
run() { # <label> <suite dir> <baseline> [args…]
  local label=$1 dir=$2 baseline=$3 log="$WORK/$1.log"
  shift 3
  PATH="$NODE22:$PATH" "$dir/node_modules/.bin/conformance" server --url "$URL" --expected-failures "$ROOT/test/conformance/$baseline" \
    -o "$WORK/out-$label" "$@" >"$log" 2>&1 || rc=1
  # the figures: scenarios passed and failed (the suite's own summary), and what the baseline decided
  local ok bad
  ok=$(sed -n '/=== SUMMARY ===/,$p' "$log" | grep -c '^✓' || true)
  bad=$(sed -n '/=== SUMMARY ===/,$p' "$log" | grep -c '^✗' || true)
  printf '%-40s scenarios: %s passed, %s failed; checks: %s\n' "$label" "$ok" "$bad" "$(grep -E '^Total:' "$log" | tail -n 1 | sed 's/^Total: //')"
  sed -n '/Expected failures (in baseline)/,$p' "$log" | grep -E 'Unexpected|Stale|stale|✗|Baseline' || true
}
run "conformance $V1" "$WORK/v1" baseline-0.1.16.yml
run "conformance $V2 (2025-11-25)" "$WORK/v2" baseline-2025-11-25.yml --requirements 2025-11-25
run "conformance $V2 (2026-07-28)" "$WORK/v2" baseline-2026-07-28.yml --requirements 2026-07-28
# the MCP Inspector's --strict: the tool list's schemas are portable (no error, and no warning either)
PATH="$NODE22:$PATH" "$WORK/inspector/node_modules/.bin/mcp-inspector" --cli "$URL" --method tools/list --strict \
  >"$WORK/inspector.json" 2>"$WORK/inspector.err" || rc=1
if [ -s "$WORK/inspector.err" ]; then cat "$WORK/inspector.err"; rc=1; fi
echo "MCP Inspector 2.12.0 --strict on tools/list: $(wc -l <"$WORK/inspector.err") lines of problems"
exit "$rc"
