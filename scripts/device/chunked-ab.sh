#!/bin/bash
# Pinned A/B of the rows whose bytes go over the data sockets (above the inline limit), from
# latency-bundle.sh's folder (v/old and v/new): per busy-loop count in BUSY (default "0 2") and per round
# (ROUNDS, default 3), old then new, one JVM pinned to PIN (default 0,1) with taskset and bench --busy N
# on the same CPUs: 64 KiB and 1 MiB WRITE, and the KV row 16 KiB x 256. One line per run:
# "busy N round R VARIANT: <bench's table rows>".
#   chunked-ab.sh          (run on the device machine, in .device/ab)
cd "$(dirname "$0")"
J=$PWD/jre/bin/java
for busy in ${BUSY:-0 2}; do
  for round in $(seq "${ROUNDS:-3}"); do
    for v in old new; do
      cp="v/$v/*:lib/*"
      rows=$(taskset -c "${PIN:-0,1}" $J -cp "$cp" io.tcpx4j.cli.Main bench --busy "$busy" --block-sizes 64K,1M \
          --iterations 300 --warmup 50 2>&1 | grep -E '^ *(64K|1M|65536|1048576)' | tr -s ' ' | tr '\n' ';')
      kv=$(taskset -c "${PIN:-0,1}" $J -cp "$cp" io.tcpx4j.cli.Main bench --busy "$busy" --block-sizes 16K \
          --batch-sizes 256 --iterations 60 --warmup 10 2>&1 | grep -E '^ *(16K|16384)' | tr -s ' ')
      echo "busy $busy round $round $v: $rows $kv"
    done
  done
done
