#!/usr/bin/env bash
# nats-cluster.sh start|stop|status: a local 3-node JetStream cluster of the
# nats-server that `make nats-server` builds into .tools/bin, for development:
# clients on 127.0.0.1:4222,4223,4224 (NATS_BASE_PORT moves them), routes on
# 6222-6224, stores and logs in .tools/nats-cluster. Point the memory at it
# with memory.journal: nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224?replicas=3
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${EXOCORTEX_NATS_SERVER:-$root/.tools/bin/nats-server}
dir=$root/.tools/nats-cluster
base=${NATS_BASE_PORT:-4222}
cbase=$((base + 2000))
usage() { echo "usage: $0 start|stop|status   (a local 3-node JetStream cluster in $dir)"; }
case "${1:-}" in
start)
  [ -x "$bin" ] || { echo "no $bin: run 'make nats-server' first" >&2; exit 1; }
  mkdir -p "$dir"
  routes="nats-route://127.0.0.1:$cbase, nats-route://127.0.0.1:$((cbase + 1)), nats-route://127.0.0.1:$((cbase + 2))"
  for i in 1 2 3; do
    if [ -f "$dir/n$i.pid" ] && kill -0 "$(cat "$dir/n$i.pid")" 2>/dev/null; then echo "node n$i already runs"; continue; fi
    cat >"$dir/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:$((base + i - 1))
jetstream { store_dir: "$dir/n$i" }
cluster { name: exo-dev, listen: 127.0.0.1:$((cbase + i - 1)), routes: [$routes] }
CONF
    nohup "$bin" -c "$dir/n$i.conf" >>"$dir/n$i.log" 2>&1 &
    echo $! >"$dir/n$i.pid"
    echo "node n$i: nats://127.0.0.1:$((base + i - 1)) (pid $!, log $dir/n$i.log)"
  done
  echo "memory.journal: nats://127.0.0.1:$base,nats://127.0.0.1:$((base + 1)),nats://127.0.0.1:$((base + 2))?replicas=3"
  ;;
stop)
  for i in 1 2 3; do
    if [ -f "$dir/n$i.pid" ]; then kill "$(cat "$dir/n$i.pid")" 2>/dev/null || true; rm -f "$dir/n$i.pid"; echo "node n$i stopped"; fi
  done
  ;;
status)
  for i in 1 2 3; do
    if [ -f "$dir/n$i.pid" ] && kill -0 "$(cat "$dir/n$i.pid")" 2>/dev/null; then echo "node n$i runs (pid $(cat "$dir/n$i.pid"))"; else echo "node n$i stopped"; fi
  done
  ;;
-h|--help|help) usage ;;
*) usage >&2; exit 2 ;;
esac
