#!/usr/bin/env bash
# `npm start`: bootstrap, build, create the database, migrate every service, then
# run the gateway and every service in the foreground with prefixed logs.
# Ctrl-C, or SIGTERM to this script alone (a supervisor, `kill`), stops them all.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=prepare.sh
. scripts/prepare.sh
# The published development encryption key and admin password are accepted only
# with STRATA_ENV=development set explicitly; unset means production.
export STRATA_ENV="${STRATA_ENV:-development}"

echo "[start] migrating (creates the database when missing)"
node apps/auth/dist/main.js migrate
node apps/data/dist/main.js migrate
node apps/webhooks/dist/main.js migrate
node apps/compute/dist/main.js migrate
node apps/inbound/dist/main.js migrate
node apps/orchestration/dist/main.js migrate
node apps/storage/dist/main.js migrate
# The steps a migration marked due that need the key ring (re-sealing stored values), before
# any service starts: docs/runbooks.md, "Upgrade steps".
echo "[start] running due upgrade steps"
node apps/auth/dist/main.js upgrade
node apps/data/dist/main.js upgrade
node apps/webhooks/dist/main.js upgrade
node apps/compute/dist/main.js upgrade
node apps/inbound/dist/main.js upgrade
node apps/orchestration/dist/main.js upgrade

pids=()
run() { # name command...
  local name=$1; shift
  ( "$@" 2>&1 | sed -u "s/^/[$name] /" ) &
  pids+=($!)
}
# Every process under this one, deepest first: the services run two levels down (a
# subshell, then the service and its log prefixer), and a signal to this script alone
# reaches none of them by itself.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    descendants "$child"
    echo "$child"
  done
}
stop() {
  trap - INT TERM
  echo "[start] stopping"
  # shellcheck disable=SC2046
  kill -TERM $(descendants $$) 2>/dev/null || true
  wait 2>/dev/null || true
  exit 0
}
trap stop INT TERM

# The command lines (node flags, entry file) are in scripts/services.list, which the platform
# benchmark (bench/src/platform-processes.ts) reads too: what it measures is what runs here.
node_args() { # name → the node arguments of that process in scripts/services.list
  awk -v name="$1" '$1 == name { $1 = ""; sub(/^ +/, ""); print; found = 1 } END { exit !found }' scripts/services.list
}
# shellcheck disable=SC2046
run auth node $(node_args auth)
# shellcheck disable=SC2046
run data node $(node_args data)
# shellcheck disable=SC2046
run webhooks node $(node_args webhooks)
# shellcheck disable=SC2046
run compute node $(node_args compute)
# Sandbox workers are processes of their own (COMPUTE_WORKERS of them, default 1), restarted
# when one ends (a lost isolate costs only one of a worker's sandbox processes: docs/sandbox.md). The
# first serves the gateway's endpoint calls on 8087; the others take any free port and the
# calls the first hands them over NATS when its isolates are busy.
worker_args=$(node_args compute-worker)
for i in $(seq 1 "${COMPUTE_WORKERS:-1}"); do
  port=$([ "$i" = 1 ] && echo "${COMPUTE_WORKER_PORT:-8087}" || echo 0)
  run "compute-worker-$i" env COMPUTE_WORKER_PORT="$port" WORKER_ARGS="$worker_args" bash -c 'trap "kill \$pid 2>/dev/null; wait \$pid; exit 0" TERM INT
  while true; do
    # shellcheck disable=SC2086
    node $WORKER_ARGS & pid=$!
    wait $pid; echo "worker exited ($?); starting a new one"; sleep 1
  done'
done
# shellcheck disable=SC2046
run inbound node $(node_args inbound)
# shellcheck disable=SC2046
run storage node $(node_args storage)
# shellcheck disable=SC2046
run orchestration node $(node_args orchestration)
# shellcheck disable=SC2046
run gateway node $(node_args gateway)

# Every service's readiness (the gateway's /healthz answers before the services behind it are ready).
READY_URLS="auth=http://127.0.0.1:8081/readyz data=http://127.0.0.1:8082/readyz compute=http://127.0.0.1:8083/readyz
  webhooks=http://127.0.0.1:8085/readyz inbound=http://127.0.0.1:8086/readyz orchestration=http://127.0.0.1:8084/readyz
  worker=http://127.0.0.1:${COMPUTE_WORKER_PORT:-8087}/readyz storage=http://127.0.0.1:8088/readyz gateway=http://127.0.0.1:8080/healthz"
not_ready() {
  local missing=""
  for entry in $READY_URLS; do
    curl -fsS --max-time 2 "${entry#*=}" >/dev/null 2>&1 || missing="$missing ${entry%%=*}"
  done
  echo "$missing"
}
waiting=$(not_ready)
for _ in $(seq 1 120); do
  [ -z "$waiting" ] && break
  sleep 0.5
  waiting=$(not_ready)
done
if [ -n "$waiting" ]; then
  echo "[start] not ready after 60 s:$waiting (their logs above say why; the rest may already answer)"
  state="Strata is starting; not ready yet:$waiting."
else
  state="Strata is running."
fi
cat <<MSG

  $state
    {base_url}  http://localhost:8080     (API documents: http://localhost:8080/docs)
    {auth_url}  http://localhost:8081     (OIDC discovery: http://localhost:8081/oidc/.well-known/openid-configuration)

  Log in (first administrator: STRATA_ADMIN_EMAIL / STRATA_ADMIN_PASSWORD, default admin@strata.local / strata-admin):
    node apps/cli/dist/main.js login --email admin@strata.local --password strata-admin
  or open http://localhost:8081/oidc/auth in a browser through any OIDC client (client id strata-cli).

  Ctrl-C stops everything.
MSG
wait
