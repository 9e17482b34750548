#!/usr/bin/env bash
# The test command of README.md (and of CI): contracts, types, lint, then every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== supergraph drift check"; npm run --silent compose:check
echo "== CRD drift check"; npm run --silent crds:check
echo "== generated types drift check"; npm run --silent types:check
echo "== operations index drift check"; npm run --silent operations:check
# Typecheck, lint and the import-cycle check are independent and each mostly single-threaded: run side by side,
# report each in full. A cycle is refused because a module evaluated half-way hands its importer undefined exports.
echo "== typecheck, lint, import cycles"
logs=$(mktemp -d)
declare -A pids
for check in typecheck lint cycles; do
  npm run --silent "$check" > "$logs/$check" 2>&1 & pids[$check]=$!
done
failed=0
for check in typecheck lint cycles; do
  wait "${pids[$check]}" || { echo "$check failed:"; failed=1; }
  cat "$logs/$check"
done
rm -rf "$logs"
[ "$failed" -eq 0 ]
echo "== tests"; npm test --silent
