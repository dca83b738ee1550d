#!/usr/bin/env bash
# `npm test`: bootstrap, build, then every test of the monorepo (unit, integration,
# end-to-end) against the PostgreSQL and NATS named by DATABASE_URL / NATS_URL.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=prepare.sh
. scripts/prepare.sh
mkdir -p reports
status=0
node --experimental-vm-modules --no-node-snapshot node_modules/jest/bin/jest.js --ci --json --outputFile=reports/jest.json "$@" || status=$?
node -e '
const r = JSON.parse(require("fs").readFileSync("reports/jest.json", "utf8"));
const failed = r.numFailedTests + r.numRuntimeErrorTestSuites;
console.log(`${r.numPassedTests} passed, ${failed} failed`);
' || echo "0 passed, 1 failed"
exit "$status"
