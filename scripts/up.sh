#!/usr/bin/env bash
# Starts the whole platform on this machine: see README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec npm start --silent
