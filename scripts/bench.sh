#!/usr/bin/env bash
# `pnpm bench` / `npm run bench`: bootstrap and build, then every benchmark under
# bench/. Each prints our figure, a baseline measured in the same run, and the ratio.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=prepare.sh
. scripts/prepare.sh
node --enable-source-maps bench/dist/records.js
node --enable-source-maps bench/dist/queries.js
node --enable-source-maps bench/dist/gateway.js
# The whole platform as `npm start` runs it, beside the data service alone (issue 37).
node --enable-source-maps --no-node-snapshot bench/dist/platform.js
node --enable-source-maps bench/dist/migrations.js
node --enable-source-maps bench/dist/webhooks.js
node --enable-source-maps --no-node-snapshot bench/dist/compute.js
node --enable-source-maps --no-node-snapshot bench/dist/triggers.js
node --enable-source-maps --no-node-snapshot bench/dist/endpoint-burst.js
node --enable-source-maps --no-node-snapshot bench/dist/inbound.js
node --enable-source-maps --no-node-snapshot bench/dist/orchestration.js
