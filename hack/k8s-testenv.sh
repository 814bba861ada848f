#!/usr/bin/env bash
# A real Kubernetes control plane for Regiment's integration tests, without
# Docker and without downloading anything but Go modules from the Go module
# proxy: etcd, kube-apiserver and, unless FULL=0, kube-controller-manager,
# kube-scheduler, kwok (fake nodes whose pods become Running) and kubectl (the
# staging guide's commands run against the test control plane).
#
# Usage: hack/k8s-testenv.sh build|dir|start|stop|smoke
#   build  build the binaries into the cache (once per version; a no-op when present)
#   dir    print the cache directory the binaries are in (REGIMENT_K8S_ASSETS for go test)
#   start  start a control plane on fixed loopback ports for manual use; prints KUBECONFIG
#   stop   stop what start started
#   smoke  scale a Deployment through /scale against a started control plane
#
# Environment:
#   K8S_VERSION (1.37.2)  ETCD_VERSION (3.7.3)  KWOK_VERSION (0.8.0)  FULL (1)
#   REGIMENT_K8S_CACHE    (${XDG_CACHE_HOME:-$HOME/.cache}/regiment/k8s); binaries go to
#                         $REGIMENT_K8S_CACHE/v$K8S_VERSION, never inside the repository.
#   WORK (/tmp/regiment-k8s)  ETCD_PORT (23790)  KAS_PORT (16443)   for start/stop/smoke
#
# The Go tests (internal/adapter/kube/testenv) start their own control plane from the cache on
# random loopback ports, once per test binary; start is for humans.
#
# Measured on 2 cores, Go 1.26: cold build (empty module and build caches)
# ~11 min for etcd + kube-apiserver, 897 s (~15 min) with FULL=1 on an idle
# machine and 20 min on one loaded by other builds (the build is CPU-bound);
# warm build cache 20-90 s; binaries present: 0 s. kube-apiserver needs
# ~2.5 GB RSS to build.
#
# Why wrapper modules: `go install k8s.io/kubernetes/cmd/kube-apiserver@vX` and
# `go install go.etcd.io/etcd/server/v3@vX` fail (their go.mod has replace
# directives), and the k8s.io/kubernetes module zip has no staging/src. A tiny
# main module that requires k8s.io/kubernetes and replaces every k8s.io/<staging>
# v0.0.0 requirement with the published v0.<minor>.<patch> builds.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.7.3}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}
FULL=${FULL:-1}
CACHE_ROOT=${REGIMENT_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/regiment/k8s}
BIN="$CACHE_ROOT/v$K8S_VERSION"
WORK=${WORK:-/tmp/regiment-k8s}
ETCD_PORT=${ETCD_PORT:-23790}
KAS_PORT=${KAS_PORT:-16443}
TOKEN=${TOKEN:-regiment-admin-token}
STAGING_VERSION="v0.${K8S_VERSION#1.}" # 1.37.2 -> v0.37.2

# The builds are separate main modules: the repository's GOFLAGS and any
# go.work must not leak into them.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOWORK=off GOFLAGS=-buildvcs=false

log() { printf '[%(%H:%M:%S)T] k8s-testenv: %s\n' -1 "$*" >&2; }

# have NAME PATTERN: the cached binary exists and its --version matches.
# grep reads all of the output (no -q): an early exit would kill the binary
# with SIGPIPE, and pipefail would then report a cached binary as missing.
have() {
  local v=--version
  [ "$1" = kubectl ] && v="version --client"
  # shellcheck disable=SC2086 # $v is one or two words
  [ -x "$BIN/$1" ] && "$BIN/$1" $v 2>/dev/null | grep -- "$2" >/dev/null
}

build_etcd() {
  if have etcd "etcd Version: $ETCD_VERSION"; then return; fi
  local d="$CACHE_ROOT/src/etcd-$ETCD_VERSION"
  mkdir -p "$d"
  printf 'module local/etcdbuild\n\ngo 1.26.0\n' >"$d/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$d/tools.go"
  log "building etcd $ETCD_VERSION"
  (cd "$d" && go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" &&
    go build -trimpath -ldflags '-s -w' -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$BIN/etcd.tmp" "$BIN/etcd"
}

build_kube() {
  local cmds="kube-apiserver" c missing=""
  [ "$FULL" = 1 ] && cmds="kube-apiserver kube-controller-manager kube-scheduler kubectl"
  for c in $cmds; do have "$c" "v$K8S_VERSION\$" || missing="$missing $c"; done
  [ -n "$missing" ] || return 0
  local d="$CACHE_ROOT/src/kubernetes-$K8S_VERSION" kdir
  mkdir -p "$d"
  printf 'module local/kubebuild\n\ngo 1.26.0\n' >"$d/go.mod"
  kdir=$(cd "$d" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  {
    printf 'module local/kubebuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$K8S_VERSION"
    grep -E '^\s+k8s\.io/[a-z0-9-]+ v0\.0\.0( |$)' "$kdir/go.mod" | awk -v v="$STAGING_VERSION" '{printf "\t%s => %s %s\n", $1, $1, v}'
    printf ')\n'
  } >"$d/go.mod"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
    printf ')\n'
  } >"$d/tools.go"
  local minor=${K8S_VERSION#1.}
  minor=${minor%%.*}
  local ldf="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION"
  ldf+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  ldf+=" -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION"
  log "building$missing $K8S_VERSION (~9 min cold for kube-apiserver on 2 cores, +3.5 min for the controller-manager and scheduler)"
  (cd "$d" && go mod tidy)
  for c in $missing; do
    (cd "$d" && go build -trimpath -ldflags "$ldf" -o "$BIN/$c.tmp" "k8s.io/kubernetes/cmd/$c")
    mv "$BIN/$c.tmp" "$BIN/$c"
  done
}

build_kwok() {
  if ! have kwok "$KWOK_VERSION"; then
    log "building kwok $KWOK_VERSION (~2.5 min cold)"
    local d="$CACHE_ROOT/src/kwok-$KWOK_VERSION"
    mkdir -p "$d"
    GOBIN="$d" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
    mv "$d/kwok" "$BIN/kwok"
  fi
  # kwok needs Stage configs; the "fast" ones ship in the kwok module zip.
  if [ ! -s "$BIN/kwok-stages.yaml" ]; then
    local kdir f
    kdir=$(cd "$CACHE_ROOT" && go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
    for f in node/fast/node-initialize node/heartbeat/node-heartbeat pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
      echo '---'
      cat "$kdir/kustomize/stage/$f.yaml"
    done >"$BIN/kwok-stages.yaml.tmp"
    mv "$BIN/kwok-stages.yaml.tmp" "$BIN/kwok-stages.yaml"
  fi
}

build() {
  mkdir -p "$BIN"
  # One build at a time per cache, whoever starts it (make, a second make, CI).
  exec 9>"$CACHE_ROOT/.build.lock"
  if command -v flock >/dev/null; then flock 9; fi
  local t0=$SECONDS
  build_etcd
  build_kube
  if [ "$FULL" = 1 ]; then build_kwok; fi
  printf 'kubernetes v%s\netcd v%s\nkwok v%s\n' "$K8S_VERSION" "$ETCD_VERSION" "$KWOK_VERSION" >"$BIN/VERSIONS"
  log "binaries ready in $BIN ($((SECONDS - t0))s)"
}

wait_for() { # pid url seconds [curl args...]
  local pid=$1 url=$2 secs=$3
  shift 3
  local end=$((SECONDS + secs))
  until curl -ksf "$@" "$url" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { log "process $pid exited; see logs in $WORK/run"; return 1; }
    [ $SECONDS -lt $end ] || { log "timeout waiting for $url"; return 1; }
    sleep 0.2
  done
}

start() {
  local run="$WORK/run"
  rm -rf "$run"
  mkdir -p "$run/pki"
  openssl genrsa -out "$run/pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$run/pki/sa.key" -pubout -out "$run/pki/sa.pub" 2>/dev/null
  echo "$TOKEN,admin,admin-uid,\"system:masters\"" >"$run/pki/tokens.csv"
  "$BIN/etcd" --name local --data-dir "$run/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 10))" --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 10))" \
    --initial-cluster "local=http://127.0.0.1:$((ETCD_PORT + 10))" \
    --unsafe-no-fsync --log-level warn >"$run/etcd.log" 2>&1 &
  echo $! >"$run/etcd.pid"
  wait_for "$(cat "$run/etcd.pid")" "http://127.0.0.1:$ETCD_PORT/health" 30
  # No insecure port exists any more: a self-signed cert goes to --cert-dir.
  # A loopback --advertise-address needs --endpoint-reconciler-type=none.
  # ServiceAccount admission is off: without a controller-manager nobody creates the default SA.
  "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --secure-port="$KAS_PORT" --cert-dir="$run/pki" \
    --advertise-address=127.0.0.1 --endpoint-reconciler-type=none --service-cluster-ip-range=10.96.0.0/24 \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$run/pki/sa.pub" --service-account-signing-key-file="$run/pki/sa.key" \
    --token-auth-file="$run/pki/tokens.csv" --authorization-mode=RBAC \
    --disable-admission-plugins=ServiceAccount >"$run/kube-apiserver.log" 2>&1 &
  echo $! >"$run/kube-apiserver.pid"
  wait_for "$(cat "$run/kube-apiserver.pid")" "https://127.0.0.1:$KAS_PORT/readyz" 120 -H "Authorization: Bearer $TOKEN"
  cat >"$WORK/kubeconfig" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:$KAS_PORT", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: "$TOKEN"}
contexts:
- name: local
  context: {cluster: local, user: admin, namespace: default}
current-context: local
KCFG
  if [ "$FULL" = 1 ]; then
    local kc="$WORK/kubeconfig"
    "$BIN/kube-controller-manager" --kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
      --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 --controllers='*' \
      --service-account-private-key-file="$run/pki/sa.key" --use-service-account-credentials=false \
      >"$run/kube-controller-manager.log" 2>&1 &
    echo $! >"$run/kube-controller-manager.pid"
    "$BIN/kube-scheduler" --kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
      --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 >"$run/kube-scheduler.log" 2>&1 &
    echo $! >"$run/kube-scheduler.pid"
    "$BIN/kwok" --kubeconfig="$kc" --config="$BIN/kwok-stages.yaml" \
      --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
      --node-ip=10.0.0.1 --cidr=10.0.0.1/24 --node-lease-duration-seconds=40 >"$run/kwok.log" 2>&1 &
    echo $! >"$run/kwok.pid"
  fi
  log "ready: export KUBECONFIG=$WORK/kubeconfig"
}

smoke() {
  local api="https://127.0.0.1:$KAS_PORT" h="Authorization: Bearer $TOKEN" r
  curl -ksf -H "$h" -H 'Content-Type: application/json' -X POST "$api/apis/apps/v1/namespaces/default/deployments" -d '{
    "apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"smoke"},
    "spec":{"replicas":1,"selector":{"matchLabels":{"app":"smoke"}},
      "template":{"metadata":{"labels":{"app":"smoke"}},"spec":{"containers":[{"name":"c","image":"example.invalid/none"}]}}}}' >/dev/null
  curl -ksf -H "$h" -H 'Content-Type: application/merge-patch+json' -X PATCH \
    "$api/apis/apps/v1/namespaces/default/deployments/smoke/scale" -d '{"spec":{"replicas":3}}' >/dev/null
  r=$(curl -ksf -H "$h" "$api/apis/apps/v1/namespaces/default/deployments/smoke/scale" |
    tr -d ' \n' | sed -n 's/.*"spec":{"replicas":\([0-9]*\)}.*/\1/p')
  curl -ksf -H "$h" -X DELETE "$api/apis/apps/v1/namespaces/default/deployments/smoke" >/dev/null
  [ "$r" = 3 ] || { log "smoke FAILED: replicas=$r"; return 1; }
  log "smoke OK: scaled a Deployment to 3 through /scale"
}

stop() {
  local run="$WORK/run" p pid
  for p in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
    [ -f "$run/$p.pid" ] || continue
    pid=$(cat "$run/$p.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$run/$p.pid"
  done
  log "stopped"
}

case "${1:-build}" in
build) build ;;
dir) echo "$BIN" ;;
start) start ;;
stop) stop ;;
smoke) smoke ;;
*)
  echo "usage: $0 build|dir|start|stop|smoke" >&2
  exit 2
  ;;
esac
