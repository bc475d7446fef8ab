#!/usr/bin/env bash
# Fuzz the real server with Schemathesis (an outside, property-based API fuzzer) from its own
# /openapi.json: every operation, a bounded number of generated requests each, and the checks
#   not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance.
# Starts `bun src/main.ts` on a fresh database (a new DATA_DIR, or a new database created in
# the PostgreSQL cluster of DATABASE_URL and dropped afterwards), on a free port of 127.0.0.1,
# mints two users through the admin API, each with a project of its own, fuzzes /api/v1 in two
# runs at once (the examples and coverage phases with one user, the fuzzing and stateful phases
# with the other), then /admin/v1 with the admin token.
#
#   npm run fuzz                                    # PGlite
#   DATABASE_URL=postgres://… npm run fuzz          # PostgreSQL
# Environment: SCHEMATHESIS (the st binary; default: st on PATH, else a venv under the work dir
# with the pinned version), FUZZ_EXAMPLES (per operation and phase, default 100), FUZZ_SEED.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
export PATH="$ROOT/node_modules/.bin:$PATH"
SCHEMATHESIS_VERSION=4.32.5
WORK=$(mktemp -d /tmp/arbor-fuzz.XXXXXX)
SERVER_PID=''
FUZZ_DB=''
ADMIN_URL="${DATABASE_URL:-}"

cleanup() {
  local rc=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -n "$FUZZ_DB" ]; then
    ADMIN_URL="$ADMIN_URL" FUZZ_DB="$FUZZ_DB" bun -e "
      import postgres from 'postgres'
      const sql = postgres(process.env.ADMIN_URL, { max: 1, onnotice: () => {} })
      await sql.unsafe('drop database if exists ' + process.env.FUZZ_DB + ' with (force)')
      await sql.end()
    " || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

ST="${SCHEMATHESIS:-}"
if [ -z "$ST" ]; then
  if command -v st >/dev/null 2>&1 && st --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
    ST=st
  else
    echo "==> installing schemathesis==$SCHEMATHESIS_VERSION in a venv under $WORK"
    python3 -m venv "$WORK/venv"
    "$WORK/venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
    ST="$WORK/venv/bin/st"
  fi
fi
echo "==> $("$ST" --version)"

PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
ADMIN_TOKEN=$(node -e "console.log(require('crypto').randomBytes(24).toString('hex'))")
BASE="http://127.0.0.1:$PORT"

ENV=(PORT="$PORT" HOST=127.0.0.1 ADMIN_TOKEN="$ADMIN_TOKEN" RATE_LIMIT_PER_MINUTE=0 LOG_LEVEL=info
  PUBLIC_BASE_URL="$BASE" DATA_DIR="$WORK/data" SCHEDULER_INTERVAL_MS=1000)
if [ -n "$ADMIN_URL" ]; then
  FUZZ_DB="arbor_fuzz_$(node -e "console.log(require('crypto').randomBytes(4).toString('hex'))")"
  ADMIN_URL="$ADMIN_URL" FUZZ_DB="$FUZZ_DB" bun -e "
    import postgres from 'postgres'
    const sql = postgres(process.env.ADMIN_URL, { max: 1, onnotice: () => {} })
    await sql.unsafe('create database ' + process.env.FUZZ_DB)
    await sql.end()
  "
  ENV+=(DATABASE_URL="$(ADMIN_URL="$ADMIN_URL" FUZZ_DB="$FUZZ_DB" node -e "const u=new URL(process.env.ADMIN_URL);u.pathname='/'+process.env.FUZZ_DB;console.log(u.toString())")")
  echo "==> server on PostgreSQL database $FUZZ_DB"
else
  ENV+=(DATABASE_URL=)
  echo "==> server on PGlite in $WORK/data"
fi

env "${ENV[@]}" bun src/main.ts >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
# a generous deadline: in CI this server starts beside the first test files, niced, and PGlite's
# first start (every migration) took more than 90 s there on a loaded machine (CI at 7c42e73)
node -e "
  const until = Date.now() + 300_000
  const poll = async () => {
    try { if ((await fetch('$BASE/healthz')).status === 200) return } catch {}
    if (Date.now() > until) { console.error('the server did not answer /healthz within 300 s'); process.exit(1) }
    setTimeout(poll, 200)
  }
  poll()
" || { cat "$WORK/server.log"; exit 1; }

# a fresh user (through the admin API) with one project of its own, for each of the two API runs
# below, so that neither sees what the other writes (a project one deletes, a member one adds):
# each run starts as the single run before them did, with a fresh key on a fresh project
user_with_project() { # <project id>: prints the new user's key
  local key
  key=$(node -e "
    fetch('$BASE/admin/v1/users', { method: 'POST', headers: { authorization: 'Bearer $ADMIN_TOKEN', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'fuzz $1', tier: 'team' }) }).then(r => r.json()).then(b => console.log(b.apiKey))
  ")
  [ -n "$key" ] && [ "$key" != undefined ] || { echo "no key for the user of $1" >&2; exit 1; }
  node -e "
    fetch('$BASE/api/v1/mutate', { method: 'POST', headers: { authorization: 'Bearer $key', 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'addProject', project: { name: 'Fuzz', id: '$1' } }) })
      .then(r => r.json()).then(b => { if (!b.success) { console.error(JSON.stringify(b)); process.exit(1) } })
  " >&2 || exit 1
  echo "$key"
}
KEY_COVERAGE=$(user_with_project fuzz)
KEY_FUZZING=$(user_with_project fuzz-b)

CHECKS=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance
COMMON=(--checks "$CHECKS" --max-examples "${FUZZ_EXAMPLES:-100}" --workers 2 --no-shrink
  --suppress-health-check all --request-timeout 30 --output-truncate true)
if [ -n "${FUZZ_SEED:-}" ]; then COMMON+=(--seed "$FUZZ_SEED"); fi
export PYTHONPATH="$ROOT/test/fuzz${PYTHONPATH:+:$PYTHONPATH}"
export SCHEMATHESIS_HOOKS=hooks
# /api/v1/keys is left out: a stateful run lists the fuzzer's own key and revokes it, and every
# project operation after that answers 401 (test/keys.test.ts holds those endpoints); and
# /api/v1/stream: a stream that opens never ends, so every case would wait out --request-timeout
# (test/process.live.test.ts holds its refusals and its messages)
API=(--exclude-path-regex '^/admin/|^/api/v1/keys$|^/api/v1/stream$')

# `st_run NAME PROJECT ARG…`: one Schemathesis run against the server, its report in
# $WORK/NAME.out and its exit code in $WORK/NAME.rc. From a directory of its own under the work
# dir: Schemathesis and Hypothesis keep their caches in the current directory.
st_run() {
  local name=$1 project=$2 rc=0
  shift 2
  mkdir -p "$WORK/$name"
  (cd "$WORK/$name" && ARBOR_FUZZ_PROJECT=$project "$ST" run "$BASE/openapi.json" "${COMMON[@]}" "$@") >"$WORK/$name.out" 2>&1 || rc=$?
  echo "$rc" >"$WORK/$name.rc"
}

# Schemathesis (4.32.5 on CPython 3.11) at times crashes inside itself while Hypothesis describes a
# strategy (a "Runtime Error": "AST constructor recursion depth mismatch", seen on POST /share,
# POST /feedback and GET /changelog in the coverage phase): that is the client failing to build a
# case, not a finding about the server. A run whose only errors are such crashes (the summary's
# "Errors:" lists nothing else, and there is no failure) is reported and passes; any failure the
# server caused (a 5xx, a status or body not as documented) still fails the step, and so does
# any other error (a request the server did not answer) and any error the server logs (below).
tool_crash_only() {
  ! grep -qE '^ *(❌|Failures:)' "$1" &&
    awk '/^Errors:$/ { list = 1; next } list && /^ *$/ { list = 0 } list { n++; if ($0 !~ /Runtime Error/) other = 1 }
      END { exit !(n > 0 && !other) }' "$1"
}

# A report as the log shows it. Each "Runtime Error" of the ERRORS section (Schemathesis's own
# crash, above) is cut to its first 6 and last 4 lines, each at most 240 characters, with the
# number of lines and characters cut: its traceback holds the repr of a cache key, a few hundred
# kilobytes of Hypothesis's source on one line. Everything else is shown whole: every failure,
# every other error.
shorten_crashes() {
  awk -v head=6 -v tail=4 -v width=240 '
    function clip(line) { return length(line) > width ? substr(line, 1, width) "… (" length(line) - width " characters cut)" : line }
    function flush(   i, cut) {
      if (n == 0) return
      if (crash && n > head + tail + 1) {
        for (i = 1; i <= head; i++) print clip(block[i])
        cut = n - head - tail
        print "    … " cut " lines of Schemathesis'"'"'s own traceback cut (the first " head " and the last " tail " are shown)"
        for (i = n - tail + 1; i <= n; i++) print clip(block[i])
      } else for (i = 1; i <= n; i++) print block[i]
      n = 0; crash = 0
    }
    /^=+ [A-Z][A-Z ]* =+$/ { flush(); errors = ($0 ~ / ERRORS /); print; next }
    errors && /^_+ .* _+$/ { flush(); print; inblock = 1; next }
    errors && /^Need more help\?$/ { flush(); inblock = 0; print; next }
    errors && inblock { block[++n] = $0; if (n == 1 && $0 == "Runtime Error") crash = 1; next }
    { print }
    END { flush() }
  '
}

# Schemathesis closes its report on pytest's banner ("==== 2 warnings in 108.57s ===="), which
# a reader of test output takes for a pytest run that executed no test; the banners are shown
# as "[schemathesis] 2 warnings (108.57 s)" (the raw report stays in $WORK/*.out, where the
# case count is read)
unbanner() { sed -u -E '/^=+ .* =+$/{ s/^=+ (.*[^= ]) =+$/[schemathesis] \1/; s/ in ([0-9.]+)s$/ (\1 s)/; }'; }

rc=0
# `report NAME WHAT`: a run's report, shortened, and its verdict
report() {
  local name=$1 run_rc
  run_rc=$(cat "$WORK/$name.rc")
  echo "==> $2"
  shorten_crashes <"$WORK/$name.out" | unbanner
  if [ "$run_rc" != 0 ] && tool_crash_only "$WORK/$name.out"; then
    echo "==> Schemathesis crashed inside itself on some operation (Runtime Error above); no failure was found in the server"
    run_rc=0
  fi
  [ "$run_rc" = 0 ] || rc=$run_rc
}

# The API's phases in two runs at once, each with its own user and project: the examples and
# coverage phases (the same cases whatever FUZZ_EXAMPLES is) and the fuzzing and stateful phases
# (FUZZ_EXAMPLES cases an operation). Each phase sends the cases it sent in one run; two Python
# processes build them side by side where one run built them one phase after the other (the
# fuzzer's time is mostly Schemathesis building cases, one core's worth: CI's one run took 400 s,
# 135 s of it coverage). Then the admin API with the admin token, alone (it can change any user).
echo "==> fuzzing /api/v1 and the health checks: the examples and coverage phases, and the fuzzing and stateful phases, two runs at once, each with a fresh user and project"
st_run api-coverage fuzz --phases examples,coverage "${API[@]}" -H "Authorization: Bearer $KEY_COVERAGE" &
COVERAGE_PID=$!
st_run api-fuzzing fuzz-b --phases fuzzing,stateful "${API[@]}" -H "Authorization: Bearer $KEY_FUZZING"
wait "$COVERAGE_PID"
report api-coverage 'fuzzing /api/v1: the examples and coverage phases (user and project fuzz)'
report api-fuzzing 'fuzzing /api/v1: the fuzzing and stateful phases (user and project fuzz-b)'
st_run admin fuzz --include-path-regex '^/admin/' -H "Authorization: Bearer $ADMIN_TOKEN"
report admin 'fuzzing /admin/v1 with the admin token'

# stop the server (it flushes its request log at exit), then count and look for logged errors
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || true
SERVER_PID=''
CASES=$(cat "$WORK/api-coverage.out" "$WORK/api-fuzzing.out" "$WORK/admin.out" | awk '/^ *[0-9]+ generated/ { n += $1 } END { print n + 0 }')
REQUESTS=$(grep -c '"msg":"request"' "$WORK/server.log" || true)
echo "==> schemathesis generated $CASES test cases; the server answered $REQUESTS requests"
if grep -q '"level":"error"' "$WORK/server.log"; then
  echo '==> the server logged errors:'
  grep '"level":"error"' "$WORK/server.log" | head -n 20
  rc=1
fi
exit "$rc"
