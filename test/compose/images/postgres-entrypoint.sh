#!/bin/sh
# First boot: initdb, then a temporary server on the Unix socket only (as the official image
# does) to create the database, then the real server on every address.
set -eu
# Started as root (the official image is too): own the data folder, whatever is mounted there
# (a volume, a tmpfs), then go on as the postgres user.
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"
  chown postgres:postgres "$PGDATA"
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > "$pwfile"
  initdb --username="${POSTGRES_USER:-postgres}" --pwfile="$pwfile" --auth-local=trust \
    --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ]; then
    createdb --username="${POSTGRES_USER:-postgres}" "$POSTGRES_DB"
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "database initialized"
fi
if [ "${1:-}" = "postgres" ]; then
  shift
  exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"
