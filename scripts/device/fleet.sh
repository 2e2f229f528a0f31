#!/bin/bash
# Fleet runs through a real etcd on one host, run from the folder fleet-bundle.sh made: WORKERS bench
# processes (default 3) per scheme in SCHEMES (default "manytoone onetomany") and op in OPS (default
# "write read"), memory MEM (default vram: every worker on GPU 0), rows BLOCKS (default 4K,64K,1M,16M) with
# --check-consistency, so every byte is verified. etcd comes from ./etcd, or etcd.xz beside this script
# (unpacked on first use), or the PATH.
set -u
cd "$(dirname "$0")"
J=$PWD/jre/bin/java
CP="v/new/*:lib/*"
log() { echo "== $(date -u +%H:%M:%S) $*"; }
etcd=./etcd
if [ ! -x "$etcd" ] && [ -f etcd.xz ]; then
  python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open("etcd.xz"), open("etcd","wb"))' && chmod +x etcd
fi
[ -x "$etcd" ] || etcd=$(command -v etcd) || { echo "no etcd: put etcd or etcd.xz beside this script" >&2; exit 2; }
port=$((23790 + RANDOM % 100)); peer=$((port + 1000))
data=$(mktemp -d)
$etcd --name fleet --data-dir "$data/d" --listen-client-urls http://127.0.0.1:$port \
  --advertise-client-urls http://127.0.0.1:$port --listen-peer-urls http://127.0.0.1:$peer \
  --initial-advertise-peer-urls http://127.0.0.1:$peer --initial-cluster fleet=http://127.0.0.1:$peer \
  > "$data/etcd.log" 2>&1 &
ep=$!
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break; sleep 0.1; done
nproc
for scheme in ${SCHEMES:-manytoone onetomany}; do for op in ${OPS:-write read}; do
  group="$scheme-$op-$$"
  log "$scheme $op, ${WORKERS:-3} workers, ${MEM:-vram}"
  pids=""
  for i in $(seq 1 "${WORKERS:-3}"); do
    $J -cp "$CP" io.tcpx4j.cli.Main bench --etcd-endpoints http://127.0.0.1:$port --benchmark-group "$group" \
        --workers "${WORKERS:-3}" --scheme "$scheme" --op "$op" --mem "${MEM:-vram}" \
        --block-sizes "${BLOCKS:-4K,64K,1M,16M}" --check-consistency ${FLEET_FLAGS:-} > "w$i.out" 2> "w$i.err" &
    pids="$pids $!"
  done
  rc=0; for p in $pids; do wait "$p" || rc=$?; done
  # every worker prints the group's merged table; its role line and any error go to stderr
  cat w1.out
  for i in $(seq 1 "${WORKERS:-3}"); do grep -v '^\s*$' "w$i.err" | tail -2; done
  echo "exit status of the last failing worker: $rc"
done; done
kill $ep; wait $ep 2>/dev/null; rm -rf "$data"
