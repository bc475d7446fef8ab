#!/usr/bin/env bash
# The container image (Dockerfile) built and run with the commands docs/operations.md gives, through
# Podman, each check seen from outside the container (scripts/container-check.ts asks the servers
# over their published ports): size; first /healthz on an empty volume; a non-root user on a
# read-only root; the owner key printed on the first start only; HEALTHCHECK; `stop` drains a held
# long poll and exits 0; search by meaning with the model inside the image; a restart on the same
# volume keeps the data; `arbor backup` and `arbor restore` through `exec`, and the restored data
# serves; two containers on one PostgreSQL serve one plan; examples/scale-out/compose.yaml under
# podman-compose (HAProxy, three replicas, PostgreSQL, Meilisearch) and a write through HAProxy is
# found by search; `down` leaves nothing running. Everything it made is removed at the end.
#   npm run build && bash scripts/container-test.sh
# As root, on Debian (installs podman, runc, mmdebstrap, uidmap, podman-compose and the CNI dnsname
# plugin when missing). No registry is needed: the base debian:bookworm-slim is made with mmdebstrap
# when no image has that name, and compose.yaml's PostgreSQL, Meilisearch and HAProxy images with
# examples/scale-out/local-images/Dockerfile (Debian's packages; Meilisearch from MEILI_BIN,
# default ../shared/tools/meilisearch).
# PG_URL=postgres://… names a PostgreSQL this host reaches, for the two containers on one database
# (the script creates a database there); without it that check is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN="$ROOT/node_modules/.bin/bun"
check() { "$BUN" "$ROOT/scripts/container-check.ts" "$@"; }
step() { printf '\n--> [%ss] %s\n' "$SECONDS" "$*"; }
fail() {
  echo "container-test: $*" >&2
  exit 1
}
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
elapsed() { node -e "console.log(((Date.now() - $1) / 1000).toFixed(2))"; }
now_ms() { node -e 'console.log(Date.now())'; }
summary() {
  printf '\ncontainer image: %s MB uncompressed, %s MB compressed; first /healthz %s s after run; stop with a held long poll %s s, exit code 0; %ss in all\n' \
    "$SIZE_MB" "$GZ_MB" "$FIRST" "$STOP" "$SECONDS"
}

# --base-only: install Podman and make the base image when missing, keep it, and stop there (CI
# makes it early, beside the PGlite tests, then removes it at its end: .ci/run). BASE_MADE_FILE,
# when set, is created when this run made the base image.
BASE_ONLY=0
if [ "${1:-}" = --base-only ]; then BASE_ONLY=1; fi
[ "$BASE_ONLY" = 1 ] || [ -x dist/arbor ] || fail 'no dist/arbor: run npm run build first'
[ "$(id -u)" = 0 ] || fail 'run as root (Podman with runc and the cgroupfs manager, as ../shared/containers.md)'
MEILI_BIN=${MEILI_BIN:-$ROOT/../shared/tools/meilisearch}

T=$(mktemp -d /tmp/arbor-container.XXXXXX)
ID=ct$$ # in the name of everything this run creates
IMAGE=localhost/arbor-$ID
VOL=arbor-data-$ID
BASE=docker.io/library/debian:bookworm-slim
BASE_MADE=0 COMPOSE_UP=0
ADMIN_TOKEN=$(node -e "console.log(require('crypto').randomBytes(24).toString('hex'))")
COMPOSE=(podman-compose -f examples/scale-out/compose.yaml)
export ARBOR_POSTGRES_IMAGE=localhost/arbor-postgres-$ID ARBOR_MEILISEARCH_IMAGE=localhost/arbor-meilisearch-$ID ARBOR_HAPROXY_IMAGE=localhost/arbor-haproxy-$ID

cleanup() {
  local rc=$?
  set +e
  if [ "$COMPOSE_UP" = 1 ]; then "${COMPOSE[@]}" down -v >/dev/null 2>&1; fi
  podman network rm -f scale-out_default >/dev/null 2>&1
  podman ps -aq --filter "name=$ID" | xargs -r podman rm -f -v -t 0 >/dev/null 2>&1
  podman volume ls -q --filter "name=$ID" | xargs -r podman volume rm -f >/dev/null 2>&1
  podman rmi -f "$IMAGE" "$ARBOR_POSTGRES_IMAGE" "$ARBOR_MEILISEARCH_IMAGE" "$ARBOR_HAPROXY_IMAGE" \
    localhost/scale-out_arbor-1 localhost/scale-out_arbor-2 localhost/scale-out_arbor-3 >/dev/null 2>&1
  if [ "$BASE_MADE" = 1 ]; then podman rmi -f "$BASE" >/dev/null 2>&1; fi
  podman image prune -f >/dev/null 2>&1
  rm -rf "$T"
  [ "$rc" = 0 ] || echo "container-test FAILED after ${SECONDS}s"
}
trap cleanup EXIT

step 'Podman (Debian packages), with the settings this kind of machine needs (../shared/containers.md)'
if ! command -v podman >/dev/null || ! command -v podman-compose >/dev/null || ! command -v mmdebstrap >/dev/null ||
  ! command -v runc >/dev/null || [ ! -x /usr/lib/cni/dnsname ]; then
  apt-get update -qq
  # dnsname: compose services find each other by name on their network
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    podman runc mmdebstrap uidmap podman-compose golang-github-containernetworking-plugin-dnsname >/dev/null
fi
# no default ulimits (setrlimit is not permitted), runc and cgroupfs (cgroup v1), events to a file
# (no journald); builds keep HEALTHCHECK (the OCI image format has none)
printf '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' >"$T/containers.conf"
export CONTAINERS_CONF="$T/containers.conf" BUILDAH_FORMAT=docker
podman --version

if podman image exists "$BASE"; then
  echo "base $BASE: already here"
else
  step "base image: $BASE from Debian's packages (mmdebstrap --variant=minbase bookworm)"
  mmdebstrap --quiet --variant=minbase bookworm "$T/bookworm.tar"
  podman import -q "$T/bookworm.tar" "$BASE" >/dev/null
  rm -f "$T/bookworm.tar"
  BASE_MADE=1
fi
if [ "$BASE_ONLY" = 1 ]; then
  if [ "$BASE_MADE" = 1 ] && [ -n "${BASE_MADE_FILE:-}" ]; then touch "$BASE_MADE_FILE"; fi
  BASE_MADE=0 # kept for the run that follows
  exit 0
fi

step 'docker build -t arbor .'
podman build -q -t "$IMAGE" . >/dev/null
SIZE=$(podman image inspect -f '{{.Size}}' "$IMAGE")
GZ=$(podman save -q --format docker-archive "$IMAGE" | gzip -c | wc -c)
SIZE_MB=$(node -e "console.log(($SIZE / 1e6).toFixed(1))")
GZ_MB=$(node -e "console.log(($GZ / 1e6).toFixed(1))")
echo "image: $SIZE_MB MB uncompressed, $GZ_MB MB compressed (gzip of the saved image); goal: at most 300 MB uncompressed"
[ "$SIZE" -le 300000000 ] || fail "the image is $SIZE_MB MB, over 300 MB"
[ "$(podman image inspect -f '{{.Config.User}}' "$IMAGE")" = 1000:1000 ] || fail 'the image does not run as user 1000'

step 'docker run -d --name arbor --read-only -p 3000:3000 -e ADMIN_TOKEN=… -v arbor-data:/data arbor  (an empty volume)'
# --read-only-tmpfs=false: podman mounts writable /tmp and /run on a read-only root unless told
# not to; docker does not, and the image must not need them
P1=$(free_port)
RUN=(podman run -d --read-only --read-only-tmpfs=false)
t0=$(now_ms)
"${RUN[@]}" --name "arbor-$ID" -p "$P1:3000" -e ADMIN_TOKEN="$ADMIN_TOKEN" -v "$VOL:/data" "$IMAGE" >/dev/null 2>"$T/run.err" ||
  { cat "$T/run.err"; fail 'podman run failed'; }
URL1=http://127.0.0.1:$P1
FIRST=$(check health "$URL1" 240) || { podman logs "arbor-$ID"; exit 1; }
echo "first /healthz $FIRST s after run (goal: 5 s)"
[ "$(podman inspect -f '{{.HostConfig.ReadonlyRootfs}}' "arbor-$ID")" = true ] || fail 'the root file system is not read-only'
RUNS_AS=$(podman top "arbor-$ID" user pid | awk 'NR == 2 {print $1 " (pid " $2 ")"}')
echo "the server runs as $RUNS_AS"
case "$RUNS_AS" in 'arbor (pid 1)') ;; *) fail "the server is not arbor, user 1000, as PID 1: $RUNS_AS" ;; esac

step 'docker logs arbor | grep "Arbor API key for owner"  (printed once)'
podman logs "arbor-$ID" >"$T/first.log" 2>&1
[ "$(grep -c '^Arbor API key for owner: arb_' "$T/first.log")" = 1 ] || { cat "$T/first.log"; fail 'the first start did not print the owner key once'; }
KEY=$(grep -o 'arb_[A-Za-z0-9]*' "$T/first.log" | head -n 1)
echo 'the first start printed the owner key once'

step 'HEALTHCHECK: podman healthcheck run arbor (the image has no curl: arbor healthcheck)'
podman healthcheck run "arbor-$ID" || fail 'the HEALTHCHECK did not pass'
STATUS=$(podman inspect -f '{{.State.Health.Status}}' "arbor-$ID")
[ "$STATUS" = healthy ] || fail "health status: $STATUS"
echo "health: $STATUS"

step 'a plan written, and found by meaning with the model inside the image'
check write "$URL1" "$KEY" box
check meaning "$URL1" "$KEY" box

step 'docker exec arbor arbor backup /data/arbor.ndjson; docker exec -e DATA_DIR=/data/restored arbor arbor restore /data/arbor.ndjson'
podman exec "arbor-$ID" arbor backup /data/arbor.ndjson
podman exec -e DATA_DIR=/data/restored "arbor-$ID" arbor restore /data/arbor.ndjson

step 'docker stop arbor: a held long poll (GET /events?wait=60) is answered, and the server exits 0 within the grace time (10 s)'
check hold "$URL1" "$KEY" box "$T/hold" &
HOLD=$!
# the poll is held once the server has logged nothing for it yet and it has not answered
sleep 2
[ ! -s "$T/hold" ] || fail "the long poll did not wait: $(cat "$T/hold")"
t0=$(now_ms)
podman stop "arbor-$ID" >/dev/null 2>"$T/stop.err" || true
STOP=$(elapsed "$t0")
wait "$HOLD"
CODE=$(podman inspect -f '{{.State.ExitCode}}' "arbor-$ID")
echo "stopped in $STOP s, exit code $CODE; the long poll: $(cut -c1-60 "$T/hold")"
[ "$CODE" = 0 ] || { podman logs "arbor-$ID" 2>&1 | tail -n 20; fail "exit code $CODE after podman stop"; }
grep -q '^200 ' "$T/hold" || fail "the held long poll was not answered: $(cat "$T/hold")"

step 'docker start arbor: the same volume, no owner key this time, the data is there'
podman start "arbor-$ID" >/dev/null 2>>"$T/run.err"
check health "$URL1" 240 >/dev/null
podman logs "arbor-$ID" >"$T/both.log" 2>&1
[ "$(grep -c '^Arbor API key for owner' "$T/both.log")" = 1 ] || fail 'the second start printed an owner key'
check read "$URL1" "$KEY" box
podman stop "arbor-$ID" >/dev/null 2>>"$T/stop.err"
[ "$(podman inspect -f '{{.State.ExitCode}}' "arbor-$ID")" = 0 ] || fail 'the second run did not exit 0'

step 'docker run -d --name arbor-restored --read-only -p 3001:3000 -e DATA_DIR=/data/restored -v arbor-data:/data arbor'
P2=$(free_port)
"${RUN[@]}" --name "arbor-restored-$ID" -p "$P2:3000" -e DATA_DIR=/data/restored -v "$VOL:/data" "$IMAGE" >/dev/null 2>>"$T/run.err"
check health "http://127.0.0.1:$P2" 240 >/dev/null
check read "http://127.0.0.1:$P2" "$KEY" box
! podman logs "arbor-restored-$ID" 2>&1 | grep -q 'API key for owner' || fail 'the restored server printed a new owner key'
podman stop "arbor-restored-$ID" >/dev/null 2>>"$T/stop.err"
[ "$(podman inspect -f '{{.State.ExitCode}}' "arbor-restored-$ID")" = 0 ] || fail 'the restored server did not exit 0'
podman rm -v "arbor-$ID" "arbor-restored-$ID" >/dev/null 2>&1

if [ -n "${PG_URL:-}" ]; then
  step 'two containers on one PostgreSQL: docker run -d --name arbor-a --network host -e PORT=3001 -e DATABASE_URL=postgres://… arbor (and arbor-b on 3002)'
  DB_URL=$(check createdb "$PG_URL" "arbor_container_$$")
  PA=$(free_port)
  PB=$(free_port)
  "${RUN[@]}" --name "arbor-a-$ID" --network host -e PORT="$PA" -e DATABASE_URL="$DB_URL" "$IMAGE" >/dev/null 2>>"$T/run.err"
  check health "http://127.0.0.1:$PA" 240 >/dev/null
  "${RUN[@]}" --name "arbor-b-$ID" --network host -e PORT="$PB" -e DATABASE_URL="$DB_URL" "$IMAGE" >/dev/null 2>>"$T/run.err"
  check health "http://127.0.0.1:$PB" 240 >/dev/null
  PG_KEY=$(podman logs "arbor-a-$ID" 2>&1 | grep -o 'arb_[A-Za-z0-9]*' | head -n 1)
  [ -n "$PG_KEY" ] || fail 'the first container on PostgreSQL printed no owner key'
  ! podman logs "arbor-b-$ID" 2>&1 | grep -q 'API key for owner' || fail 'the second container on PostgreSQL printed an owner key'
  check write "http://127.0.0.1:$PA" "$PG_KEY" pg
  check read "http://127.0.0.1:$PB" "$PG_KEY" pg
  podman stop "arbor-a-$ID" "arbor-b-$ID" >/dev/null 2>>"$T/stop.err"
  for c in "arbor-a-$ID" "arbor-b-$ID"; do
    [ "$(podman inspect -f '{{.State.ExitCode}}' "$c")" = 0 ] || fail "$c did not exit 0"
  done
  podman rm -v "arbor-a-$ID" "arbor-b-$ID" >/dev/null 2>&1
else
  echo 'PG_URL is not set: two containers on one PostgreSQL not checked'
fi

if [ ! -x "$MEILI_BIN" ]; then
  echo "no Meilisearch executable at $MEILI_BIN (set MEILI_BIN): compose.yaml not checked"
  summary
  exit 0
fi

step 'images for compose.yaml from Debian packages (examples/scale-out/local-images), in place of postgres, meilisearch and haproxy'
mkdir -p "$T/local-images"
cp examples/scale-out/local-images/Dockerfile examples/scale-out/local-images/postgres-entrypoint.sh "$T/local-images/"
cp "$MEILI_BIN" "$T/local-images/meilisearch"
for target in postgres meilisearch haproxy; do
  var=ARBOR_$(echo "$target" | tr a-z A-Z)_IMAGE
  podman build -q --network host --target "$target" -t "${!var}" "$T/local-images" >/dev/null
done

step 'docker compose -f examples/scale-out/compose.yaml up -d --build'
export ARBOR_HTTP_PORT
ARBOR_HTTP_PORT=$(free_port)
COMPOSE_UP=1
"${COMPOSE[@]}" up -d --build >"$T/compose-up.log" 2>&1 || { cat "$T/compose-up.log"; fail 'compose up failed'; }
LB=http://127.0.0.1:$ARBOR_HTTP_PORT
check health "$LB" 240 >/dev/null || { "${COMPOSE[@]}" logs 2>&1 | tail -n 40; exit 1; }
# the replica that created the owner printed the key (they start together on one empty database)
LB_KEY=$("${COMPOSE[@]}" logs 2>/dev/null | grep -o 'API key for owner: arb_[A-Za-z0-9]*' | sed 's/.*: //' | sort -u)
[ "$(echo "$LB_KEY" | grep -c arb_)" = 1 ] || fail "compose logs: expected one owner key, got: $LB_KEY"
check write "$LB" "$LB_KEY" lb
check meaning "$LB" "$LB_KEY" lb
podman ps --format '{{.Names}} {{.Status}}' --filter label=io.podman.compose.project=scale-out

step 'docker compose -f examples/scale-out/compose.yaml down -v'
"${COMPOSE[@]}" down -v >"$T/compose-down.log" 2>&1 || { cat "$T/compose-down.log"; fail 'compose down failed'; }
COMPOSE_UP=0
LEFT=$(podman ps -a -q --filter label=io.podman.compose.project=scale-out)
[ -z "$LEFT" ] || fail "containers left after down: $LEFT"
echo 'nothing left running'

summary
