#!/usr/bin/env bash
# The test command of README.md (and of CI): contracts, types, lint, then every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== supergraph drift check"; npm run --silent compose:check
echo "== CRD drift check"; npm run --silent crds:check
echo "== generated types drift check"; npm run --silent types:check
# Typecheck and lint are independent and each mostly single-threaded: run side by side, report each in full.
echo "== typecheck and lint"
logs=$(mktemp -d)
npm run --silent typecheck > "$logs/typecheck" 2>&1 & typecheck=$!
npm run --silent lint > "$logs/lint" 2>&1 & lint=$!
failed=0
wait "$typecheck" || { echo "typecheck failed:"; failed=1; }
cat "$logs/typecheck"
wait "$lint" || { echo "lint failed:"; failed=1; }
cat "$logs/lint"
rm -rf "$logs"
[ "$failed" -eq 0 ]
echo "== tests"; npm test --silent
