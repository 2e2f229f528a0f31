#!/bin/bash
# Unloaded host, interleaved A/B of two builds from latency-bundle.sh's folder (v/old and v/new): per round,
# for each build, 4 KiB, 4 KiB, 64 KiB and 1 MiB between two processes (serve + bench --role initiator),
# the same small rows in one JVM, and the KV rows 16 KiB x 256 and 64 KiB x 64 (scattered), each against the
# bench's raw TCP column; then tcp_pingpong.py. ROUNDS (default 2).
#   old-new.sh          (run on the device machine, in .device/ab)
cd "$(dirname "$0")"
J=$PWD/jre/bin/java
run() { # name classpath bench-args...
  local name=$1 cp=$2; shift 2
  port=$((7200 + RANDOM % 500))
  $J -cp "$cp" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port > /dev/null 2>&1 &
  sp=$!; sleep 1.5
  echo "== $name two-proc"
  $J -cp "$cp" io.tcpx4j.cli.Main bench --role initiator --peer 127.0.0.1:$port "$@" \
      --block-sizes 4K,4K,64K,1M --iterations 1500 --warmup 300 2>&1 | tail -5 | head -4
  kill $sp; wait $sp 2>/dev/null
  echo "== $name one JVM"
  $J -cp "$cp" io.tcpx4j.cli.Main bench "$@" --block-sizes 4K,4K,64K --iterations 1500 --warmup 300 2>&1 | tail -4 | head -3
  $J -cp "$cp" io.tcpx4j.cli.Main bench "$@" --block-sizes 16K --batch-sizes 256 --iterations 100 --warmup 20 2>&1 | tail -2 | head -1
  $J -cp "$cp" io.tcpx4j.cli.Main bench "$@" --block-sizes 64K --batch-sizes 64 --layout reversed --iterations 100 \
      --warmup 20 2>&1 | tail -2 | head -1
}
for round in $(seq "${ROUNDS:-2}"); do
  run old "v/old/*:lib/*"
  run new "v/new/*:lib/*"
done
python3 tcp_pingpong.py 4096 5000
