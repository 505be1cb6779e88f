#!/usr/bin/env bash
# Removes what test/e2e/cluster/up.sh created: the kind cluster (its context leaves the
# kubeconfig with it), the cloud-provider-kind container, and the load-balancer containers it
# ran for this cluster. The tools up.sh downloaded stay in their cache. Safe to run again.
set -euo pipefail

CLUSTER=session-routing-e2e # the name up.sh and kind.yaml use
LB_CONTAINER="$CLUSTER-cloud-provider-kind"
TOOLS_DIR="${E2E_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/session-routing-e2e/bin}"
export PATH="$TOOLS_DIR:$PATH"

command -v docker >/dev/null || {
  echo "down.sh: docker is required" >&2
  exit 1
}

if command -v kind >/dev/null; then
  # Deleting a cluster that does not exist is no error for kind.
  kind delete cluster --name "$CLUSTER"
fi

# SIGTERM (docker stop) lets cloud-provider-kind remove the load-balancer containers it runs
# before it exits, which SIGKILL (docker rm -f) would not.
docker stop --time 30 "$LB_CONTAINER" >/dev/null 2>&1 || true
docker rm -f "$LB_CONTAINER" >/dev/null 2>&1 || true
# Whatever it left for this cluster (a provider killed before it could clean up).
docker ps -aq --filter "label=io.x-k8s.cloud-provider-kind.cluster=$CLUSTER" |
  xargs -r docker rm -f >/dev/null
echo "removed kind cluster $CLUSTER and container $LB_CONTAINER" >&2
