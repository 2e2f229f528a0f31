#!/bin/bash
# Busy host, interleaved A/B of two builds from latency-bundle.sh's folder (v/old and v/new): everything
# pinned to PIN (default 0,1) beside BUSY (default 2) busy loops on the same CPUs; per round (ROUNDS,
# default 3), per mode in MODES and per build, old then new, two processes (serve + bench --role initiator)
# 4 KiB and 64 KiB WRITE; then tcp_pingpong.py beside the same loops. Modes: "threads" (defaults on both
# sides), "caller" (the initiator driven by the bench thread: --progress caller), "caller-spin0" (the same
# with --spin 0 on both sides). One line per run: "round R MODE VARIANT: <size avg p99; ...>".
#   busy-ab.sh          (run on the device machine, in .device/ab)
cd "$(dirname "$0")"
J=$PWD/jre/bin/java PIN=${PIN:-0,1}
pin=(taskset -c "$PIN")
loops=()
for i in $(seq "${BUSY:-2}"); do "${pin[@]}" sh -c 'while :; do :; done' & loops+=($!); done
trap 'kill ${loops[*]} 2>/dev/null' EXIT
row() { awk '/^(4096|65536) /{printf "%s avg %s us p99 %s us; ", $1, $4, $10}'; }
for round in $(seq "${ROUNDS:-3}"); do
  for mode in ${MODES:-threads caller}; do
    for v in old new; do
      s=(); i=()
      case $mode in
        caller) i=(--progress caller) ;;
        caller-spin0) s=(--spin 0); i=(--progress caller --spin 0) ;;
      esac
      port=$((7300 + RANDOM % 500))
      "${pin[@]}" $J -cp "v/$v/*:lib/*" io.tcpx4j.cli.Main serve --listen 127.0.0.1:$port "${s[@]}" > /dev/null 2>&1 &
      sp=$!; sleep 2
      two=$("${pin[@]}" timeout 120 $J -cp "v/$v/*:lib/*" io.tcpx4j.cli.Main bench --role initiator \
          --peer 127.0.0.1:$port "${i[@]}" --block-sizes 4K,64K --iterations 2000 --warmup 200 2>&1 | row)
      kill $sp; wait $sp 2>/dev/null
      echo "round $round $mode $v: $two"
    done
  done
done
"${pin[@]}" python3 tcp_pingpong.py 4096 3000
