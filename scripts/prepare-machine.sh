#!/usr/bin/env bash
# Brings up what the test suite needs beside node_modules: PostgreSQL and Redis on loopback, and
# Debian's Chromium for the browser tests. It installs what is missing where it may (root and
# apt-get: a fresh Debian or Ubuntu machine or container), starts what is stopped, creates the
# `test` database, and says what it did in one line each. Where it may not (no root, macOS,
# another distribution) it prints the one command that would do it, and the suites skip, naming
# themselves on the run's last lines. Quick and silent when all is there.
set -u

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
may_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

# The one command that would bring the missing services up here, for a machine where this script may not.
advise() {
  if [ "$(uname -s)" = Darwin ]; then
    echo "[payhook] to run every suite: brew install redis postgresql@16 && brew services start redis && brew services start postgresql@16 && createdb test"
  elif command -v apt-get >/dev/null 2>&1; then
    echo "[payhook] to run every suite: sudo bash scripts/prepare-machine.sh (it installs redis-server, postgresql and chromium with apt-get)"
  else
    echo "[payhook] to run every suite: docker compose up -d (compose.yaml: Redis on 6379, PostgreSQL on 5432 with a test database)"
  fi
}

updated=
apt_install() {
  [ -n "$updated" ] || { apt-get update -qq >/dev/null && updated=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

missing=
if ! pg_up && ! command -v pg_ctlcluster >/dev/null 2>&1; then
  if may_install; then
    echo "[payhook] installing PostgreSQL (apt-get install postgresql)"
    # A fresh container has no init system: the package's own start may be refused; it is started below.
    if apt_install postgresql postgresql-client; then
      # The cluster this script made: the suites connect as postgres over 127.0.0.1 without a password.
      for hba in /etc/postgresql/*/main/pg_hba.conf; do
        [ -f "$hba" ] || continue
        sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
        echo "[payhook] PostgreSQL: trust for connections from 127.0.0.1 and ::1 ($hba)"
      done
    else
      echo "[payhook] could not install PostgreSQL with apt-get"
    fi
  else
    missing=1
  fi
fi
if ! pg_up && command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  echo "[payhook] starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
if pg_up; then
  if ! psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" 2>/dev/null | grep -q 1; then
    psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE test' >/dev/null 2>&1 && echo "[payhook] PostgreSQL: created the test database"
  fi
else
  echo "[payhook] PostgreSQL is not reachable on 127.0.0.1:5432; the Postgres suites will skip (see README, 'Stores')."
fi

if ! redis_up && ! command -v redis-server >/dev/null 2>&1; then
  if may_install; then
    echo "[payhook] installing Redis (apt-get install redis-server)"
    apt_install redis-server redis-tools || echo "[payhook] could not install Redis with apt-get"
  else
    missing=1
  fi
fi
if ! redis_up && command -v redis-server >/dev/null 2>&1; then
  echo "[payhook] starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no >/dev/null || true
  for _ in $(seq 1 30); do redis_up && break; sleep 1; done
fi
redis_up || echo "[payhook] Redis is not reachable on 127.0.0.1:6379; the Redis suites will skip (see README, 'Stores')."

if [ ! -x /usr/bin/chromium ]; then
  if may_install; then
    echo "[payhook] installing Debian's chromium for the browser tests"
    apt_install chromium || echo "[payhook] could not install chromium; the browser tests need /usr/bin/chromium"
  else
    echo "[payhook] /usr/bin/chromium is missing; the browser tests will skip (install Debian's chromium package)."
  fi
fi

{ [ -n "$missing" ] || ! pg_up || ! redis_up; } && advise
exit 0
