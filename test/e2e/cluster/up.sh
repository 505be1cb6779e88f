#!/usr/bin/env bash
# Creates the cluster the end-to-end suite runs against, on a Linux machine with Docker: a kind
# cluster, cloud-provider-kind for LoadBalancer addresses, ingress-nginx, Envoy Gateway with its
# GatewayClass `eg`, and the suite's Gateway. docs/e2e.md explains each step, and
# .github/workflows/e2e.yml runs this same script. Running it again converges on the same setup.
set -euo pipefail

# Pinned versions. A version and its checksums below change together, in one edit.
KIND_VERSION=v0.33.0                # its node image is pinned, by digest, in kind.yaml
KUBECTL_VERSION=v1.35.8             # the cluster's minor
HELM_VERSION=v4.3.0
CLOUD_PROVIDER_KIND_VERSION=v0.11.1
INGRESS_NGINX_CHART_VERSION=4.15.1  # controller v1.15.1, ingress-nginx's last release
ENVOY_GATEWAY_VERSION=v1.9.2

# SHA-256 of each download, as published beside it, per architecture.
declare -A SHA256=(
  [kind-amd64]=aee6151561422756b764a4ae28e7f44cda5af5a9eead3cc9985112b1de8d8e0d
  [kind-arm64]=20022bee6cfcd5086cb7234d218e3454e6090022f2a8f55d1fa7fcf42c3867a2
  [kubectl-amd64]=874d5e72dbb819f43cff16bcd1e4f8bac5b7f2361fe1e55049b0a6c676fb0cbf
  [kubectl-arm64]=cc749967b62f4422260bc9c0aa7a7c55f45175ae38cb8d95767b5d2b7e04c1fd
  [helm-amd64]=86584a54def73570558f66f5111cc53dfed56689637ae32c1201205d494f54fb
  [helm-arm64]=31c5794dd55c66a51e6b7d2e2ac7a114ae8b1de41ff1d9ba51748ac973b06a08
)

CLUSTER=session-routing-e2e # also the `name` in kind.yaml; down.sh uses the same
CONTEXT="kind-$CLUSTER"
LB_CONTAINER="$CLUSTER-cloud-provider-kind"
LB_IMAGE="registry.k8s.io/cloud-provider-kind/cloud-controller-manager:$CLOUD_PROVIDER_KIND_VERSION"
GATEWAY_NAMESPACE=session-routing-e2e
TOOLS_DIR="${E2E_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/session-routing-e2e/bin}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

step() { printf '\n== %s\n' "$*" >&2; }
die() {
  printf 'up.sh: %s\n' "$*" >&2
  exit 1
}

[ "$(uname -s)" = Linux ] || die "Linux only (docs/e2e.md says how to use another cluster)"
case "$(uname -m)" in
  x86_64 | amd64) ARCH=amd64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) die "no pinned tools for $(uname -m)" ;;
esac
for tool in docker curl sha256sum tar; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
docker info >/dev/null 2>&1 || die "docker does not answer: start it, or join the docker group"

# Downloads $1 to $3, which appears only once its SHA-256 is $2: a cut or altered download
# never lands where the next run would take it for installed.
download() {
  local url=$1 sum=$2 dest=$3 tmp
  tmp=$(mktemp "$TOOLS_DIR/.download.XXXXXX")
  if ! curl -fsSL --retry 3 -o "$tmp" "$url"; then
    rm -f "$tmp"
    die "could not download $url"
  fi
  if ! echo "$sum  $tmp" | sha256sum --check --status; then
    rm -f "$tmp"
    die "$url: its SHA-256 is not $sum"
  fi
  mv "$tmp" "$dest"
}

# True when $1 is an executable whose SHA-256 is $2.
installed() { [ -x "$1" ] && echo "$2  $1" | sha256sum --check --status; }

step "tools in $TOOLS_DIR: kind $KIND_VERSION, kubectl $KUBECTL_VERSION, helm $HELM_VERSION"
mkdir -p "$TOOLS_DIR"
if ! installed "$TOOLS_DIR/kind" "${SHA256[kind-$ARCH]}"; then
  download "https://kind.sigs.k8s.io/dl/$KIND_VERSION/kind-linux-$ARCH" \
    "${SHA256[kind-$ARCH]}" "$TOOLS_DIR/kind"
  chmod 0755 "$TOOLS_DIR/kind"
fi
if ! installed "$TOOLS_DIR/kubectl" "${SHA256[kubectl-$ARCH]}"; then
  download "https://dl.k8s.io/release/$KUBECTL_VERSION/bin/linux/$ARCH/kubectl" \
    "${SHA256[kubectl-$ARCH]}" "$TOOLS_DIR/kubectl"
  chmod 0755 "$TOOLS_DIR/kubectl"
fi
helm_version=$("$TOOLS_DIR/helm" version --template '{{.Version}}' 2>/dev/null || true)
if [ "$helm_version" != "$HELM_VERSION" ]; then
  download "https://get.helm.sh/helm-$HELM_VERSION-linux-$ARCH.tar.gz" \
    "${SHA256[helm-$ARCH]}" "$TOOLS_DIR/helm.tar.gz"
  tar -xzf "$TOOLS_DIR/helm.tar.gz" -C "$TOOLS_DIR" --strip-components=1 "linux-$ARCH/helm"
  rm -f "$TOOLS_DIR/helm.tar.gz"
fi
export PATH="$TOOLS_DIR:$PATH"

k() { kubectl --context "$CONTEXT" "$@"; }

# Waits up to $1 seconds for `kubectl get <rest> -o jsonpath=$3` to print something, and prints
# it under the name $2. kubectl wait cannot wait for a field to appear with any value.
wait_for_value() {
  local seconds=$1 what=$2 path=$3 value=""
  shift 3
  local deadline=$((SECONDS + seconds))
  until value=$(k get "$@" -o jsonpath="$path" 2>/dev/null) && [ -n "$value" ]; do
    [ "$SECONDS" -lt "$deadline" ] || die "$what: still none after ${seconds}s"
    sleep 2
  done
  printf '%s: %s\n' "$what" "$value" >&2
  printf '%s' "$value"
}

step "kind cluster $CLUSTER"
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  echo "already exists" >&2
else
  kind create cluster --name "$CLUSTER" --config "$HERE/kind.yaml" --wait 120s
fi
# Puts the context back when the kubeconfig lost it (another KUBECONFIG, a deleted file).
kind export kubeconfig --name "$CLUSTER"
# kubeadm labels control-plane nodes to keep them out of load balancers. Here the one node runs
# every workload, so with the label no LoadBalancer Service would reach anything.
k label nodes --all node.kubernetes.io/exclude-from-external-load-balancers-

step "cloud-provider-kind $CLOUD_PROVIDER_KIND_VERSION (container $LB_CONTAINER)"
# --gateway-channel=disabled keeps it a LoadBalancer provider only: enabled, it installs its own
# Gateway API CRDs over Envoy Gateway's, runs a Gateway controller, and an Ingress controller
# with a default IngressClass that would change what a session Ingress without a class gets.
running=$(docker inspect -f '{{if .State.Running}}{{.Config.Image}}{{end}}' "$LB_CONTAINER" \
  2>/dev/null || true)
if [ "$running" = "$LB_IMAGE" ]; then
  echo "already running" >&2
else
  docker rm -f "$LB_CONTAINER" >/dev/null 2>&1 || true
  docker run -d --name "$LB_CONTAINER" --restart unless-stopped --network host \
    -v /var/run/docker.sock:/var/run/docker.sock \
    "$LB_IMAGE" --gateway-channel=disabled >/dev/null
fi

step "ingress-nginx chart $INGRESS_NGINX_CHART_VERSION"
# ingress-nginx writes Ingress status only on a timer, --status-update-interval (default 60 s),
# never when an Ingress appears: at 60 s a new Ingress could wait the whole route timeout.
# 5 s is the least it accepts.
helm --kube-context "$CONTEXT" upgrade --install ingress-nginx ingress-nginx \
  --repo https://kubernetes.github.io/ingress-nginx --version "$INGRESS_NGINX_CHART_VERSION" \
  --namespace ingress-nginx --create-namespace \
  --set-string controller.extraArgs.status-update-interval=5
k -n ingress-nginx wait deployment/ingress-nginx-controller --for=condition=Available --timeout=300s
# The controller copies its Service's address into every Ingress's status: without one it
# writes none, and no Ingress would ever be programmed.
ingress_address=$(wait_for_value 120 "ingress-nginx address" \
  '{.status.loadBalancer.ingress[0].ip}' -n ingress-nginx service/ingress-nginx-controller)

step "Envoy Gateway $ENVOY_GATEWAY_VERSION and GatewayClass eg"
helm --kube-context "$CONTEXT" upgrade --install eg oci://docker.io/envoyproxy/gateway-helm \
  --version "$ENVOY_GATEWAY_VERSION" --namespace envoy-gateway-system --create-namespace
k -n envoy-gateway-system wait deployment/envoy-gateway --for=condition=Available --timeout=300s
k apply -f - <<'EOF'
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
EOF
k wait gatewayclass/eg --for=condition=Accepted --timeout=60s

step "Gateway $GATEWAY_NAMESPACE/sessions"
k apply -f "$HERE/gateway.yaml"
# Programmed once Envoy runs and its LoadBalancer Service has an address; 180 s is the Gateway
# API conformance suite's default for a Gateway's address.
k -n "$GATEWAY_NAMESPACE" wait gateway/sessions --for=condition=Programmed --timeout=180s
gateway_address=$(wait_for_value 30 "Gateway address" '{.status.addresses[0].value}' \
  -n "$GATEWAY_NAMESPACE" gateway/sessions)

# Envoy answers 404 for a host no route claims: any HTTP answer shows that this machine reaches
# the address the probe journey will use.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
  -H 'Host: up-check.sessions.localtest.me' "http://$gateway_address/" || true)
if [ "$code" = 000 ]; then
  printf '\nwarning: nothing answers at http://%s/ from this machine; set %s\n' \
    "$gateway_address" "SESSION_ROUTING_E2E_PROBE_ADDRESS and _PORT (docs/e2e.md)" >&2
fi

kubeconfig="${KUBECONFIG:-$HOME/.kube/config}"
cat >&2 <<EOF

Ready: ingress-nginx at $ingress_address, Gateway $GATEWAY_NAMESPACE/sessions at $gateway_address.
Run the suite with:

  SESSION_ROUTING_E2E_KUBECONFIG=${kubeconfig%%:*} SESSION_ROUTING_E2E_CONTEXT=$CONTEXT npm run test:cluster

and remove everything with test/e2e/cluster/down.sh.
EOF
