#!/usr/bin/env bash
# Builds the real control plane the cluster tests and `npm run cluster:real` run, from Go
# modules at the versions of versions.env: kube-apiserver, kube-controller-manager and
# kube-scheduler, etcd, kwok and Traefik, plus the Gateway API CRDs of Traefik's version.
#
# Each component lands in a cache directory outside the working tree, keyed by its
# version: $SESSION_ROUTING_CONTROL_PLANE_CACHE, else ~/.cache/session-routing/control-plane
# (XDG_CACHE_HOME is honoured). A component is built in a scratch directory beside the
# cache and renamed into place only once whole, so a failed or interrupted build leaves
# nothing half-written; run again and it picks up what is missing. With every component
# there, it says so in one line and does nothing.
#
#   test/control-plane/build.sh           build what is missing
#   test/control-plane/build.sh --where   print the cache directory and exit
#
# Needs Go (GO_MINIMUM of versions.env) and the Go module proxy; nothing else.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Another pin file (its tests use one) with SESSION_ROUTING_CONTROL_PLANE_VERSIONS.
# shellcheck source=versions.env
source "${SESSION_ROUTING_CONTROL_PLANE_VERSIONS:-$here/versions.env}"

cache="${SESSION_ROUTING_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/session-routing/control-plane}"
if [ "${1:-}" = "--where" ]; then
  echo "$cache"
  exit 0
fi
if [ $# -gt 0 ]; then
  echo "control plane build: unknown argument $1 (the only one is --where)" >&2
  exit 2
fi

kubernetes_dir="$cache/kubernetes-$KUBERNETES_VERSION"
etcd_dir="$cache/etcd-$ETCD_VERSION"
kwok_dir="$cache/kwok-$KWOK_VERSION"
traefik_dir="$cache/traefik-$TRAEFIK_VERSION"
summary="Kubernetes $KUBERNETES_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION, Traefik $TRAEFIK_VERSION"

# A component is whole once its `complete` stamp exists: the last thing written into it.
missing=()
for dir in "$kubernetes_dir" "$etcd_dir" "$kwok_dir" "$traefik_dir"; do
  [ -f "$dir/complete" ] || missing+=("$dir")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "control plane: $summary already built in $cache; nothing to do"
  exit 0
fi

# Go: what `npm test` never needs, and only this build does.
if ! command -v go >/dev/null 2>&1; then
  echo "control plane build: needs Go $GO_MINIMUM or later on the PATH (https://go.dev/doc/install); no go command found" >&2
  exit 1
fi
go_version="$(go env GOVERSION)"
if ! printf '%s\n%s\n' "go$GO_MINIMUM" "$go_version" | sort -V -C; then
  echo "control plane build: needs Go $GO_MINIMUM or later (https://go.dev/doc/install); found $go_version" >&2
  exit 1
fi
# Never let a go.mod's toolchain line fetch another Go: a too-new requirement fails loudly here.
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOFLAGS=-mod=mod

mkdir -p "$cache"
scratch="$(mktemp -d "$cache/.build-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
log="$scratch/log"
started=$SECONDS

# Runs a build step; on failure names the component and version, shows the step's last
# lines, and leaves the cache as it was (the scratch directory goes with the trap).
step() {
  local what="$1"
  shift
  if ! "$@" >>"$log" 2>&1; then
    echo "control plane build: $what failed; the last lines of its output:" >&2
    tail -n 25 "$log" >&2
    exit 1
  fi
}

# step for a command whose stdout is the result: the output goes to the caller, errors to the log.
step_output() {
  local what="$1" out
  shift
  if ! out="$("$@" 2>>"$log")"; then
    echo "control plane build: $what failed; the last lines of its output:" >&2
    tail -n 25 "$log" >&2
    exit 1
  fi
  echo "$out"
}

# A scratch Go module requiring `module@version`, with the `go` and `godebug` lines of that
# module's own go.mod, so the program builds with the language settings its authors chose.
scratch_module() {
  local dir="$1" module="$2" version="$3" upstream
  mkdir -p "$dir" || return 1
  upstream="$(module_file "$module" "$version" GoMod)" || return 1
  {
    echo "module session-routing.local/control-plane"
    echo
    grep -E '^go [0-9]' "$upstream"
    grep -E '^godebug ' "$upstream"
    echo
    echo "require $module $version"
  } >"$dir/go.mod"
  echo "$upstream"
}

# Downloads `module@version` into the module cache and prints one path of it: its `Dir`
# (the source) or its `GoMod`. `go mod download -json` says what went wrong on stdout, in
# an `Error` field: that goes to stderr.
module_file() {
  local module="$1" version="$2" field="$3" json path error
  json="$(go mod download -json "$module@$version")"
  error="$(sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
  path="$(sed -n "s/^[[:space:]]*\"$field\": \"\(.*\)\",\$/\1/p" <<<"$json")"
  if [ -n "$error" ] || [ -z "$path" ] || [ ! -e "$path" ]; then
    echo "go mod download $module@$version: ${error:-no $field in its answer}" >&2
    return 1
  fi
  echo "$path"
}

# Moves a finished component into the cache: stamp it, then one rename.
install_component() {
  local built="$1" target="$2"
  echo "$3" >"$built/complete"
  rm -rf "$target"
  mv "$built" "$target"
}

build_kubernetes() {
  local what="Kubernetes $KUBERNETES_VERSION" dir="$scratch/kubernetes" upstream staging ldflags pkg
  echo "control plane build: $what (kube-apiserver, kube-controller-manager, kube-scheduler)"
  upstream="$(step_output "$what (download)" scratch_module "$dir" k8s.io/kubernetes "$KUBERNETES_VERSION")"
  # k8s.io/kubernetes replaces every staging module (k8s.io/api, ...) with a path inside its
  # own repository, which a module zip does not carry: take each at the same release instead.
  staging="v0${KUBERNETES_VERSION#v1}"
  {
    echo
    echo "replace ("
    sed -n 's/^[[:space:]]*\(k8s\.io\/[a-z0-9-]*\) => \.\/staging\/.*/\1/p' "$upstream" | while read -r module; do
      printf '\t%s => %s %s\n' "$module" "$module" "$staging"
    done
    echo ")"
  } >>"$dir/go.mod"
  for pkg in kube-apiserver kube-controller-manager kube-scheduler; do
    step "$what (resolve $pkg)" bash -c "cd '$dir' && go get -tool k8s.io/kubernetes/cmd/$pkg@$KUBERNETES_VERSION"
  done
  # What `/version` and `--version` report, as k/k's hack/lib/version.sh sets it.
  local minor="${KUBERNETES_VERSION#v1.}"
  minor="${minor%%.*}"
  local built_at
  built_at="$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$(dirname "$upstream")/$KUBERNETES_VERSION.info")"
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$built_at"
  done
  mkdir -p "$dir/out/bin"
  step "$what (go build)" bash -c "cd '$dir' && go build -trimpath -ldflags '$ldflags' -o out/bin/ \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler"
  install_component "$dir/out" "$kubernetes_dir" "$KUBERNETES_VERSION"
}

build_etcd() {
  local what="etcd $ETCD_VERSION" dir="$scratch/etcd"
  echo "control plane build: $what"
  step_output "$what (download)" scratch_module "$dir" go.etcd.io/etcd/server/v3 "$ETCD_VERSION" >/dev/null
  step "$what (resolve)" bash -c "cd '$dir' && go get -tool go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  mkdir -p "$dir/out/bin"
  step "$what (go build)" bash -c "cd '$dir' && go build -trimpath -ldflags '-s -w' -o out/bin/etcd go.etcd.io/etcd/server/v3"
  install_component "$dir/out" "$etcd_dir" "$ETCD_VERSION"
}

build_kwok() {
  local what="kwok $KWOK_VERSION" dir="$scratch/kwok"
  echo "control plane build: $what"
  step_output "$what (download)" scratch_module "$dir" sigs.k8s.io/kwok "$KWOK_VERSION" >/dev/null
  step "$what (resolve)" bash -c "cd '$dir' && go get -tool sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mkdir -p "$dir/out/bin"
  step "$what (go build)" bash -c "cd '$dir' && go build -trimpath -ldflags '-s -w' -o out/bin/kwok sigs.k8s.io/kwok/cmd/kwok"
  install_component "$dir/out" "$kwok_dir" "$KWOK_VERSION"
}

build_traefik() {
  local what="Traefik $TRAEFIK_VERSION" dir="$scratch/traefik" upstream gateway_api crds
  echo "control plane build: $what"
  upstream="$(step_output "$what (download)" scratch_module "$dir" github.com/traefik/traefik/v3 "$TRAEFIK_VERSION")"
  # Traefik's go.mod replaces two dependencies with its own forks and excludes one version;
  # a requiring module must say the same, or it builds against the originals.
  {
    echo
    sed -n '/^replace (/,/^)/p' "$upstream"
    sed -n 's/^replace \([^(].*\)/replace \1/p' "$upstream"
    grep -E '^exclude ' "$upstream" || true
  } >>"$dir/go.mod"
  step "$what (resolve)" bash -c "cd '$dir' && go get -tool github.com/traefik/traefik/v3/cmd/traefik@$TRAEFIK_VERSION"
  mkdir -p "$dir/out/bin"
  local ldflags="-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION"
  step "$what (go build)" bash -c "cd '$dir' && go build -trimpath -ldflags '$ldflags' -o out/bin/traefik github.com/traefik/traefik/v3/cmd/traefik"
  # The Gateway API CRDs, standard channel, of the version this Traefik was built with.
  gateway_api="$(step_output "$what (Gateway API version)" bash -c "cd '$dir' && go list -m -f '{{.Version}}' sigs.k8s.io/gateway-api")"
  crds="$(step_output "Gateway API $gateway_api (download)" module_file sigs.k8s.io/gateway-api "$gateway_api" Dir)"
  mkdir -p "$dir/out/gateway-api"
  cp "$crds"/config/crd/standard/*.yaml "$dir/out/gateway-api/"
  chmod u+w "$dir/out/gateway-api"/*.yaml
  echo "$gateway_api" >"$dir/out/gateway-api/version"
  install_component "$dir/out" "$traefik_dir" "$TRAEFIK_VERSION"
}


echo "control plane build: $summary into $cache (a first build takes minutes)"
[ -f "$kubernetes_dir/complete" ] || build_kubernetes
[ -f "$etcd_dir/complete" ] || build_etcd
[ -f "$kwok_dir/complete" ] || build_kwok
[ -f "$traefik_dir/complete" ] || build_traefik
echo "control plane build: done in $((SECONDS - started)) s; $(du -sh "$cache" | cut -f1) in $cache"
