#!/usr/bin/env bash
# Installs what the platform needs on this machine, idempotently: Debian packages for the servers the
# local stack may have to start itself, npm dependencies (Node 24 comes with them), generated Prisma clients.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
have_pg_server() { command -v initdb >/dev/null 2>&1 || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; }
have_pg_server || need_apt+=(postgresql)
command -v psql >/dev/null 2>&1 || need_apt+=(postgresql-client)
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || need_apt+=(nats-server)
have_mariadb_server() { command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; }
have_mariadb_server && command -v mariadb-install-db >/dev/null 2>&1 || need_apt+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 && command -v mariadb-dump >/dev/null 2>&1 || need_apt+=(mariadb-client)
command -v age >/dev/null 2>&1 || need_apt+=(age)
command -v zstd >/dev/null 2>&1 || need_apt+=(zstd)
# Templates: word-processor files to PDF (LibreOffice, with the metric fonts that keep Calibri/Cambria layouts),
# PDF tools for the tests (pdftotext, qpdf).
command -v soffice >/dev/null 2>&1 || need_apt+=(libreoffice-writer-nogui)
# The converter speaks UNO to its running LibreOffice through Debian's Python (another python3 on the PATH lacks it).
/usr/bin/python3 -c 'import uno' >/dev/null 2>&1 || need_apt+=(python3-uno)
command -v pdftotext >/dev/null 2>&1 || need_apt+=(poppler-utils)
command -v qpdf >/dev/null 2>&1 || need_apt+=(qpdf)
# Document-mode bodies are printed to PDF by Debian's Chromium (never a downloaded browser).
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# grep without -q reads all of fc-list's output: under pipefail, -q quitting early would fail the pipe (SIGPIPE) and ask apt again.
fc-list 2>/dev/null | grep -i carlito >/dev/null || need_apt+=(fonts-crosextra-carlito)
fc-list 2>/dev/null | grep -i caladea >/dev/null || need_apt+=(fonts-crosextra-caladea)
fc-list 2>/dev/null | grep -i 'liberation serif' >/dev/null || need_apt+=(fonts-liberation2)

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: please install these Debian packages first: ${need_apt[*]}" >&2
    exit 1
  fi
  echo "bootstrap: installing ${need_apt[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends "${need_apt[@]}"
  # Debian starts a cluster (and a MariaDB server) on install; the local stack runs its own servers, so leave those as they are.
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "bootstrap: npm is required (any Node.js with npm 10+; the project brings its own Node 24)" >&2
  exit 1
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error
fi

echo "bootstrap: generating the Prisma clients"
node_modules/.bin/node scripts/prisma-generate.ts >/dev/null 2>&1 || node_modules/.bin/node scripts/prisma-generate.ts
echo "bootstrap: building the dashboard and the console"
node_modules/.bin/node apps/dashboard/scripts/build.ts
node_modules/.bin/node apps/console/scripts/build.ts
echo "bootstrap: ready (node $(node_modules/.bin/node --version))"
