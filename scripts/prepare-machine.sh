#!/usr/bin/env bash
# Brings up what the test suite needs beside node_modules: PostgreSQL and Redis on loopback, and
# Debian's Chromium for the browser tests. Best effort: it starts or installs only what is missing,
# and only where it may (root, apt-get); otherwise it says what to do and the suites say the rest.
set -u

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up && command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  echo "[payhook] starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
if pg_up; then
  psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" 2>/dev/null | grep -q 1 ||
    psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE test' >/dev/null 2>&1 || true
else
  echo "[payhook] PostgreSQL is not reachable on 127.0.0.1:5432; the Postgres store tests need it (see README, 'Stores')."
fi

if ! redis_up && command -v redis-server >/dev/null 2>&1; then
  echo "[payhook] starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no >/dev/null || true
  for _ in $(seq 1 30); do redis_up && break; sleep 1; done
fi
redis_up || echo "[payhook] Redis is not reachable on 127.0.0.1:6379; the Redis store tests need it (see README, 'Stores')."

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[payhook] installing Debian's chromium for the browser tests"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ||
      echo "[payhook] could not install chromium; the browser tests need /usr/bin/chromium"
  else
    echo "[payhook] /usr/bin/chromium is missing; install Debian's chromium package for the browser tests."
  fi
fi
exit 0
