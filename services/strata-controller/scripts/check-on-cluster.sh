#!/usr/bin/env bash
# What the tests here cannot prove: the strata-controller on a real cluster. Applies resources (e.g. the file
# `strata quickstart --file stack.yaml` writes, or your own) as custom resources with kubectl, waits until each is
# Ready for its current generation, and checks the finalizer, the Lease and the controller's RBAC.
# It was NOT run when it was written: the development machines have no cluster and no kubectl
# (docs/strata-controller.md, "What an operator should check").
#
# Usage: services/strata-controller/scripts/check-on-cluster.sh RESOURCES.yaml
#   RESOURCES.yaml  Strata resources and the Secrets they name (`---` separated). The Secret documents go to
#                   Strata's secret store with `strata apply` (the controller never reads Kubernetes Secrets);
#                   the others are applied with kubectl, in the namespaces their metadata names.
# Environment:
#   CONTROLLER_NAMESPACE  where the controller runs and holds its Lease (default: sigil, as rendered by infra/k8s)
#   LEASE_NAME            its Lease (default: strata-controller)
#   SERVICE_ACCOUNT       its service account (default: strata-controller)
#   TIMEOUT               how long to wait for Ready (default: 180s)
#   DELETE_TARGET         NAMESPACE/NAME of a BackupTarget to delete at the end: its object must go only after the
#                         catalog deleted it (and released its replication slot)
# Needs: kubectl (context on the cluster), strata (logged in with the restorer-admin role), awk.
set -euo pipefail

FILE=${1:?usage: check-on-cluster.sh RESOURCES.yaml}
CONTROLLER_NAMESPACE=${CONTROLLER_NAMESPACE:-sigil}
LEASE_NAME=${LEASE_NAME:-strata-controller}
SERVICE_ACCOUNT=${SERVICE_ACCOUNT:-strata-controller}
TIMEOUT=${TIMEOUT:-180s}
FINALIZER=backups.strata.dev/catalog

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

# The documents of FILE that are (secrets) or are not (resources) `kind: Secret`, `---` separated.
documents() {
  awk -v want="$1" '
    function flush() { if (doc ~ /[^[:space:]]/) { secret = (doc ~ /(^|\n)kind: *Secret *(\n|$)/); if ((want == "secrets") == secret) printf "---\n%s", doc } doc = "" }
    /^---/ { flush(); next }
    /^#/ { next }
    { doc = doc $0 "\n" }
    END { flush() }' "$FILE"
}

step "CRDs installed"
for plural in backupstores backuppolicies backuptargets backups restores sandboxes; do
  kubectl get crd "$plural.backups.strata.dev" -o name >/dev/null || fail "CRD $plural.backups.strata.dev is missing: kubectl apply -k infra/k8s/crds"
done

step "the controller's Lease has a holder"
holder=$(kubectl -n "$CONTROLLER_NAMESPACE" get lease "$LEASE_NAME" -o jsonpath='{.spec.holderIdentity}')
[ -n "$holder" ] || fail "Lease $CONTROLLER_NAMESPACE/$LEASE_NAME has no holder: is the controller running? kubectl -n $CONTROLLER_NAMESPACE logs deploy/strata-controller"
echo "held by $holder"

step "RBAC: what the controller may and may not do"
as="system:serviceaccount:$CONTROLLER_NAMESPACE:$SERVICE_ACCOUNT"
for check in "watch backuptargets" "update backuptargets" "update backuptargets/status"; do
  # shellcheck disable=SC2086
  kubectl auth can-i $check --as "$as" -n "$(documents resources | awk '/^  namespace:/ { print $2; exit }')" >/dev/null || fail "the controller may not $check"
done
for denied in "get secrets" "delete backuptargets" "create pods"; do
  # shellcheck disable=SC2086
  if kubectl auth can-i $denied --as "$as" -n "$CONTROLLER_NAMESPACE" >/dev/null 2>&1; then fail "the controller may $denied: more than it needs"; fi
done

step "secrets into Strata's secret store"
if [ -n "$(documents secrets)" ]; then documents secrets | strata apply -f -; else echo "(none in $FILE)"; fi

step "resources as custom resources"
documents resources | kubectl apply -f -
# "namespace Kind/name" of each, as the API server holds them.
mapfile -t objects < <(documents resources | kubectl get -f - --no-headers -o custom-columns=NS:.metadata.namespace,KIND:.kind,NAME:.metadata.name | awk '{ print $1 " " $2 "/" $3 }')
[ "${#objects[@]}" -gt 0 ] || fail "no Strata resources in $FILE"

step "each Ready for its current generation, with the finalizer"
for entry in "${objects[@]}"; do
  namespace=${entry%% *}
  object=${entry#* }
  kubectl wait -n "$namespace" --for=condition=Ready --timeout="$TIMEOUT" "$object" >/dev/null || {
    kubectl get -n "$namespace" "$object" -o jsonpath='{.status.message}{"\n"}' >&2
    fail "$namespace/$object is not Ready"
  }
  read -r generation observed ready_generation finalizers < <(kubectl get -n "$namespace" "$object" -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="Ready")].observedGeneration} {.metadata.finalizers}')
  [ "$generation" = "$observed" ] && [ "$generation" = "$ready_generation" ] || fail "$namespace/$object: generation $generation, status.observedGeneration $observed, Ready's $ready_generation"
  case "$object" in
    BackupStore/*|BackupPolicy/*|BackupTarget/*) [[ "$finalizers" == *"$FINALIZER"* ]] || fail "$namespace/$object has no finalizer $FINALIZER" ;;
  esac
  echo "$namespace/$object Ready (generation $generation)"
done

if [ -n "${DELETE_TARGET:-}" ]; then
  step "deleting BackupTarget $DELETE_TARGET"
  namespace=${DELETE_TARGET%/*}
  name=${DELETE_TARGET#*/}
  kubectl delete -n "$namespace" "backuptarget/$name" --wait=false
  kubectl wait -n "$namespace" --for=delete --timeout="$TIMEOUT" "backuptarget/$name" || fail "backuptarget/$name is still there: kubectl get -n $namespace backuptarget/$name -o yaml (its Ready condition says why)"
  if strata get resource BackupTarget "$DELETE_TARGET" >/dev/null 2>&1; then fail "the catalog still has BackupTarget $DELETE_TARGET"; fi
  echo "gone from the cluster and the catalog; on the database server, no slot may be left:"
  echo "  SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE 'strata_%';"
fi

echo "OK"
