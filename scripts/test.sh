#!/usr/bin/env bash
# `npm test` (and CI, through .ci/run): bootstrap and build, then every check of the
# monorepo against the PostgreSQL and NATS named by DATABASE_URL / NATS_URL:
#   1. Prettier's check (`pnpm format:check`),
#   2. ESLint, with the module boundaries (`pnpm lint`),
#   3. the TypeScript check of every package, tests included (`pnpm typecheck`),
#   4. the whole Jest suite: unit, integration and end-to-end (arguments go to Jest).
# Every step runs even when an earlier one failed. The last line is always
# "N passed, N failed": N passed counts Jest tests; N failed counts failed Jest
# tests plus each failed step (a build, format, lint or typecheck failure, or a
# Jest run that did not finish). The exit status is non-zero on any failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Whatever stops the script early (bootstrap, build) still ends with the totals line.
summarised=false
trap 'status=$?; if [ "$summarised" = false ]; then echo "0 passed, 1 failed"; [ "$status" -ne 0 ] || status=1; fi; exit "$status"' EXIT

# shellcheck source=prepare.sh
. scripts/prepare.sh
# shellcheck source=chart-tools.sh
. scripts/chart-tools.sh

failed_steps=()
step() { # name command...
  local name=$1
  shift
  echo "[test] $name"
  if ! "$@"; then
    echo "[test] FAILED: $name"
    failed_steps+=("$name")
  fi
}

step 'format check' pnpm format:check
step 'lint' pnpm lint
step 'typecheck' pnpm exec turbo run typecheck --output-logs=errors-only

mkdir -p reports
rm -f reports/jest.json
echo '[test] jest'
jest_status=0
node --experimental-vm-modules --no-node-snapshot node_modules/jest/bin/jest.js --ci --json --outputFile=reports/jest.json "$@" ||
  jest_status=$?

# "passed failed" of the Jest run; a run that wrote no report counts as one failure.
read -r passed failed < <(node -e '
const fs = require("fs");
try {
  const r = JSON.parse(fs.readFileSync("reports/jest.json", "utf8"));
  console.log(r.numPassedTests, r.numFailedTests + r.numRuntimeErrorTestSuites);
} catch {
  console.log(0, 1);
}
')
if [ "$jest_status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed_steps+=('jest (no failed test, but the run failed)')
fi
if [ "${#failed_steps[@]}" -gt 0 ]; then
  printf '[test] failed step: %s\n' "${failed_steps[@]}"
fi
summarised=true
echo "$passed passed, $((failed + ${#failed_steps[@]})) failed"
if [ "$((failed + ${#failed_steps[@]}))" -ne 0 ]; then exit 1; fi
