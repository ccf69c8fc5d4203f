#!/bin/sh
# The system programs the test suite runs, installed from Debian's packages when one is missing.
# `make test` calls this first, so the suite passes on a fresh machine with nothing done before.
# Prints one line when it installs something and nothing when all is there. As a user other than
# root, or with no apt-get, it names what is missing and how to install it; the tests that need a
# missing program then fail naming it.
#
#   command      package        used by
#   chromium     chromium       the web console's browser tests (test/server/console/)
#   promtool     prometheus     the /metrics lint (test/server/metrics.test.ts)
#   nats-server  nats-server    the nats connector and group tests (they start their own servers)
#   mosquitto    mosquitto      the MQTT tests (they start their own brokers on free ports)
#   redis-server redis-server   the redis connector tests (.ci/run starts the server)
#   lintian      lintian        the Debian package's check (test/packaging/deb.test.ts)
#   qemu-aarch64-static qemu-user-static, with libc6-arm64-cross: the arm64 executable run under
#                emulation (test/packaging/arm64.test.ts)
set -u

missing=""
need() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || missing="$missing $2"; }
need chromium chromium
need promtool prometheus
need nats-server nats-server
need mosquitto mosquitto
need redis-server redis-server
need lintian lintian
need qemu-aarch64-static qemu-user-static
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || missing="$missing libc6-arm64-cross"

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "make test: missing Debian packages:$missing (install them with: sudo apt-get install -y$missing); the tests that use them will fail" >&2
  exit 0
fi

echo "make test: installing Debian packages the tests use:$missing"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine's package lists may be stale or empty: install, and on failure refresh and retry.
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null 2>&1 ||
  { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $missing >/dev/null 2>&1; } ||
  echo "make test: apt-get could not install:$missing; the tests that use them will fail" >&2
# A package's own service may start on its default port when installed; the tests start their own
# servers on free ports, so that one is left as Debian starts it.
exit 0
