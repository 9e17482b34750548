#!/usr/bin/env bash
# The test command of README.md (and of CI): contracts, types, lint, then every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== supergraph drift check"; npm run --silent compose:check
echo "== CRD drift check"; npm run --silent crds:check
echo "== generated types drift check"; npm run --silent types:check
echo "== typecheck"; npm run --silent typecheck
echo "== lint"; npm run --silent lint
echo "== tests"; npm test --silent
