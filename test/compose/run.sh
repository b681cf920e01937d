#!/usr/bin/env bash
# `npm run test:compose`: the docker-compose stack, for real. Installs and starts a Docker engine
# when the machine has none running (and stops the one it started), builds the local base images
# (base-images.sh: no container registry is needed), builds the product image from the
# product's Dockerfile, then runs test/compose/*.compose.test.ts, each of which brings a stack
# up, drives it through the gateway's port published on 127.0.0.1, and takes it down with -v.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=test/compose
started_at=$(date +%s)
# shellcheck source=engine.sh
. "$here/engine.sh"

install_engine
start_engine
trap stop_engine_if_started EXIT
pick_compose
export COMPOSE

step() { echo "== $1 ($(($(date +%s) - started_at)) s in)"; }

step "base images"
bash "$here/base-images.sh"

step "product image (Dockerfile)"
build_started=$(date +%s)
# The build reaches the npm registry through the host's network; the Dockerfile knows nothing of it.
DOCKER_BUILDKIT=0 docker build --network host -q -t chunklog:local . >/dev/null
figures="$(mktemp)"
export COMPOSE_FIGURES="$figures"
echo "figure: product image build: $(($(date +%s) - build_started)) s" | tee -a "$figures"
size=$(docker image inspect -f '{{.Size}}' chunklog:local)
base=$(docker image inspect -f '{{.Size}}' node:24-bookworm-slim)
echo "figure: image chunklog:local: $((size / 1000000)) MB, of which $(((size - base) / 1000000)) MB on top of node:24-bookworm-slim" | tee -a "$figures"

step "compose tests"
npx vitest run --config "$here/vitest.config.ts" "$@"

step "done"
echo "== figures"
cat "$figures"
echo "figure: test:compose total: $(($(date +%s) - started_at)) s" 
rm -f "$figures"
