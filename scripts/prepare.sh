#!/usr/bin/env bash
# Shared by `npm start` and `npm test`: toolchain, dependencies, default
# connection settings, build. Sourced from the repository root.
# shellcheck source=bootstrap.sh
. scripts/bootstrap.sh
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/strata}"
export NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"
pnpm exec turbo run build --output-logs=errors-only
