# Sourced by run.sh: makes a Docker engine and a compose command available, and remembers
# whether it started the engine so that it stops only what it started.
# Sets COMPOSE (the compose command: "docker compose" or "docker-compose").

ENGINE_STATE_DIR="${ENGINE_STATE_DIR:-/tmp/chunklog-compose-engine}"
ENGINE_STARTED=""

install_engine() {
  local packages=()
  command -v dockerd >/dev/null || packages+=(docker.io)
  if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
    packages+=(docker-compose)
  fi
  command -v debootstrap >/dev/null || packages+=(debootstrap)
  if [ "${#packages[@]}" -gt 0 ]; then
    echo "== installing ${packages[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
  fi
}

start_engine() {
  if docker info >/dev/null 2>&1; then return 0; fi
  echo "== starting dockerd (log: $ENGINE_STATE_DIR/dockerd.log)"
  mkdir -p "$ENGINE_STATE_DIR"
  # Ports published without an address (testcontainers publishes so) bind to loopback only.
  dockerd --ip=127.0.0.1 >"$ENGINE_STATE_DIR/dockerd.log" 2>&1 &
  echo $! >"$ENGINE_STATE_DIR/dockerd.pid"
  ENGINE_STARTED=1
  for _ in $(seq 1 60); do
    if docker info >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "dockerd did not come up:"
  tail -n 20 "$ENGINE_STATE_DIR/dockerd.log"
  return 1
}

stop_engine_if_started() {
  [ -n "$ENGINE_STARTED" ] || return 0
  local pid
  pid="$(cat "$ENGINE_STATE_DIR/dockerd.pid")"
  echo "== stopping the dockerd this run started (pid $pid)"
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 1
  done
  kill -9 "$pid" 2>/dev/null || true
}

pick_compose() {
  if docker compose version >/dev/null 2>&1; then
    COMPOSE="docker compose"
  else
    COMPOSE="docker-compose"
  fi
  echo "== compose: $($COMPOSE version | head -n 1)"
}
