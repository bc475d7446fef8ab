#!/usr/bin/env bash
# Generate a Python client of the Arbor API from a running server's /openapi.json into a venv,
# with openapi-python-client from PyPI (pinned), and install it there with its dependencies.
#   ARBOR_API_URL=http://localhost:3000 bash examples/python/generate.sh [venv-dir]
# The venv (default examples/python/.venv, ignored by git) then runs example.py.
set -euo pipefail
cd "$(dirname "$0")"
OPENAPI_PYTHON_CLIENT_VERSION=0.29.1
BASE="${ARBOR_API_URL:-http://localhost:3000}"
VENV="${1:-.venv}"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION"
SPEC=$(mktemp /tmp/arbor-openapi.XXXXXX.json)
OUT=$(mktemp -d /tmp/arbor-python-client.XXXXXX)
trap 'rm -rf "$SPEC" "$OUT"' EXIT
"$VENV/bin/python" -c "import sys, urllib.request; open(sys.argv[2], 'wb').write(urllib.request.urlopen(sys.argv[1] + '/openapi.json').read())" "$BASE" "$SPEC"
# the venv's bin first: the generator formats its output with the ruff it brings
# (it warns once: GET /admin/v1/backup answers NDJSON, a stream it has no type for)
PATH="$(cd "$VENV" && pwd)/bin:$PATH" "$VENV/bin/openapi-python-client" generate --path "$SPEC" --output-path "$OUT/client" --overwrite \
  >"$OUT/generate.log" 2>&1 || { cat "$OUT/generate.log"; exit 1; }
grep '^WARNING' "$OUT/generate.log" || true
"$VENV/bin/pip" install --quiet --disable-pip-version-check "$OUT/client"
echo "arbor_api_client installed in $VENV: $(find "$OUT/client/arbor_api_client/api" -name '*.py' ! -name '__init__.py' | wc -l) operations"
