#!/usr/bin/env bash
# Starts the whole platform on this machine: see README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# Node 24 from node_modules (the machine's own Node may be older): `npm start` lands here too.
exec node_modules/.bin/node infra/local/src/up.ts "$@"
