#!/bin/bash
# Runs the GPU tests and benchmarks on the device machine, from a folder made by prepare.sh.
# Everything it writes goes to $OUT, in at most 7 files (run.log, tests.log and those below), since
# only 8 come back from the device machine.
#
#   run.sh STAGE...      stages, in the order given:
#     tests     gpu-tagged tests of cuda-unpack and integration-tests (io.tcpx4j.it.gpu), then the
#               unpack-kernel suite once per ptx/*.ptx variant            -> tests.log
#     callpath  CallPathBench: host ns per driver call, direct against JCuda (CALLPATH_ARGS)
#                                                      -> appended to callpath.md
#     staging   StagingBench: staging-copy latency by size, bounce pages in host memory to the GPU
#               through the unpacker and the copy engine (STAGING_ARGS)  -> appended to callpath.md
#     unpack    UnpackBench, shipped kernel and every ptx/*.ptx variant (or those in UNPACK_PTX,
#               which may be empty)                    -> appended to unpack.md (errors to run.log)
#     kv        `tcpx4j bench` KV-cache-shaped rows (KV_ROWS, default 16K:256:150 32K:128:150 64K:64:200
#               as block:batch:iterations) for KV_MEMS (vram dram) x KV_LAYOUTS (adjacent reversed) x
#               KV_LIMITS x WRITE and READ, KV_ROUNDS rounds (2), KV_WARMUP warm-up transfers per row
#               (30); KV_VARIANTS: run each row with these builds in turn ("lib" is this one, any other
#               name variants/NAME); KV_LIMITS: packing limits, each "0" (nothing packed), "default"
#               (the bench's defaults), HOST or HOST:DEVICE (--coalesce-limit, --device-coalesce-limit);
#               default "0 default"                                                   -> run.log
#     smoke     GpuPairBench on ONE GPU (both processes on GPU 0), few sizes -> pair.jsonl, pair.log
#     pair      GpuPairBench GPU 0 -> GPU 1 for each of $PAIR_CONFIGS (CxS = channels x sockets per
#               comm), with the raw TCP ceiling at the same socket count -> pair.jsonl, pair.log
#     ab        A/B of the jar sets in variants/ (prepare.sh VARIANT=...): AB_ROUNDS rounds (default 2),
#               each runs every AB_CONFIGS entry (CxS[:chunk], default "4x4 8x2") with every variant
#               in turn (reversed order in even rounds), GPU 0 -> GPU 1, labelled VARIANT-CxS; the
#               first run of a round adds the raw TCP ceiling, so every round has its own
#                                                                           -> pair.jsonl, pair.log
#     nccl      nccl_socket_bench.py with NCCL defaults and with 4 x 4 sockets -> nccl.jsonl (log: pair.log)
#     plot      gpu-pair.png from pair.jsonl and nccl.jsonl
#
# Knobs (environment): AB_ROUNDS, AB_CONFIGS, NCCL_SOCKS (nsocks:nthreads pairs for the nccl stage,
# default "0:0 4:4"), TEST_PTX (variant names whose suite runs; default all), PAIR_ARGS (extra
# GpuPairBench options, e.g. "--profile true"), PAIR_CONFIGS ("4x4 8x2"), PAIR_SIZES, PAIR_REPS, UNPACK_ARGS (extra
# UnpackBench options), UNPACK_BOTH (variant names to bench with the work list both in VRAM and
# host-mapped), NCCL_SIZES, NCCL_ITERS.
set -u
cd "$(dirname "$0")"
: "${OUT:?set OUT to the output folder}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
J=$PWD/jre/bin/java
CP=$(ls lib/*.jar | tr '\n' ':')
DEPS=$(ls lib/*.jar | grep -v '^lib/tcpx4j-' | tr '\n' ':')     # lib/ without its tcpx4j jars
variant_cp() { echo "$(ls variants/"$1"/*.jar | tr '\n' ':')$DEPS"; }
LAUNCHER=$(ls junit-platform-console-standalone-*.jar)
SIZES=${PAIR_SIZES:-4K,16K,64K,256K,1M,4M,16M,64M}
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/run.log"; }

{ date -u; nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv
  nvidia-smi topo -m 2>/dev/null | head -5; nproc; free -g | head -2; $J -version 2>&1 | head -1; } >> "$OUT/run.log" 2>&1
cat "$OUT/run.log"

for stage in "$@"; do
  case $stage in
  tests)
    log "tests: gpu-tagged, cuda-unpack + integration-tests"
    timeout 240 $J -jar "$LAUNCHER" execute --class-path "$CP" --include-tag gpu \
      --scan-class-path=lib/tcpx4j-cuda-unpack-tests.jar:lib/tcpx4j-it-tests.jar --include-package io.tcpx4j.cuda \
      --include-package io.tcpx4j.it.gpu --details=tree --disable-banner >> "$OUT/tests.log" 2>&1
    log "tests exit $?"
    grep -E "tests (successful|failed|skipped|aborted|found)|containers failed" "$OUT/tests.log" | tee -a "$OUT/run.log"
    grep -B2 -A12 -E "✘" "$OUT/tests.log" | head -60
    for f in ptx/*.ptx; do
      [ -f "$f" ] || continue
      b=${f#ptx/}; b=${b%.ptx}
      [ -z "${TEST_PTX:-}" ] || [[ " $TEST_PTX " == *" $b "* ]] || continue
      echo "== CudaScatterGatherGpuTest with $f" >> "$OUT/tests.log"
      timeout 60 $J -Dtcpx4j.test.ptx=$f -jar "$LAUNCHER" execute --class-path "$CP" \
        --select-class=io.tcpx4j.cuda.CudaScatterGatherGpuTest --details=summary --disable-banner >> "$OUT/tests.log" 2>&1
      echo "variant $f exit $?" | tee -a "$OUT/tests.log" "$OUT/run.log"
    done
    ;;
  callpath)
    log "CallPathBench"
    timeout 120 $J -cp "$CP" io.tcpx4j.cuda.CallPathBench ${CALLPATH_ARGS:-} 2>&1 | tee -a "$OUT/callpath.md"
    ;;
  staging)
    log "StagingBench"
    timeout 120 $J -cp "$CP" io.tcpx4j.cuda.StagingBench ${STAGING_ARGS:-} 2>&1 | tee -a "$OUT/callpath.md"
    ;;
  unpack)
    log "UnpackBench"
    variants=()
    for f in ptx/*.ptx; do
      [ -f "$f" ] || continue
      b=${f#ptx/}; b=${b%.ptx}
      [ -z "${UNPACK_PTX+x}" ] || [[ " $UNPACK_PTX " == *" $b "* ]] || continue
      if [[ " ${UNPACK_BOTH:-} " == *" $b "* ]]; then variants+=(--ptx-both "$b=$f"); else variants+=(--ptx "$b=$f"); fi
    done
    timeout 300 $J -cp "$CP" io.tcpx4j.cuda.UnpackBench --out "$OUT/unpack.tmp" "${variants[@]}" ${UNPACK_ARGS:-} \
      > "$OUT/unpack.log.tmp" 2>&1
    log "UnpackBench ${UNPACK_ARGS:-} exit $?"
    cat "$OUT/unpack.tmp" >> "$OUT/unpack.md"; echo >> "$OUT/unpack.md"
    grep -v "^|" "$OUT/unpack.log.tmp" >> "$OUT/run.log"   # errors only: the table is in unpack.md
    grep -E "4 KiB shuffled \||1 KiB shuffled \||batch|^\| \|" "$OUT/unpack.tmp" | tee -a "$OUT/run.log"
    rm -f "$OUT/unpack.tmp" "$OUT/unpack.log.tmp"
    ;;
  kv)
    # KV-cache-shaped rows through `tcpx4j bench` (one JVM, two engines, loopback transport on GPU 0),
    # packed (the defaults) and not (0) in the same run, each row with the bench's raw column
    for round in $(seq "${KV_ROUNDS:-2}"); do for mem in ${KV_MEMS:-vram dram}; do
      for layout in ${KV_LAYOUTS:-adjacent reversed}; do for lim in ${KV_LIMITS:-0 default}; do for op in write read; do
        case $lim in
          default) limits="" ;;
          0) limits="--coalesce-limit 0 --device-coalesce-limit 0" ;;
          *:*) limits="--coalesce-limit ${lim%%:*} --device-coalesce-limit ${lim#*:}" ;;
          *) limits="--coalesce-limit $lim" ;;
        esac
        log "kv round $round mem=$mem layout=$layout coalesce=$lim $op"
        for row in ${KV_ROWS:-16K:256:150 32K:128:150 64K:64:200}; do
          IFS=: read -r bs bn it <<< "$row"
          vs=${KV_VARIANTS:-lib}; [ $((round % 2)) = 1 ] || vs=$(printf '%s\n' $vs | tac)   # ABBA against drift
          for v in $vs; do   # lib: this build; else variants/NAME (prepare.sh VARIANT=NAME)
            cp=$CP; [ "$v" = lib ] || cp=$(variant_cp "$v")
            timeout 60 $J -cp "$cp" io.tcpx4j.cli.Main bench --mem $mem --op $op --layout $layout \
              $limits --block-sizes $bs --batch-sizes $bn --iterations $it --warmup ${KV_WARMUP:-30} \
              2>&1 | tail -2 | head -1 | sed "s/^/$v /" | tee -a "$OUT/run.log"
          done
        done
      done; done; done
    done; done
    ;;
  smoke)
    log "GpuPairBench smoke, both processes on GPU 0"
    timeout 120 $J -cp "$CP" io.tcpx4j.it.gpu.GpuPairBench --gpu 0 --peer-gpu 0 --sizes 4K,1M,64M --reps 3 \
      --bytes-per-rep 256M --label tcpx4j-1gpu-2x2 --out "$OUT/pair.jsonl" >> "$OUT/pair.log" 2>&1
    log "smoke exit $?"
    ;;
  pair)
    for cfg in ${PAIR_CONFIGS:-4x4 8x2}; do   # CxS[:chunk[:kind]], e.g. 4x4:2M or 4x4:512K:DRAM
      IFS=: read -r cs chunk kind <<< "$cfg"
      c=${cs%x*}; s=${cs#*x}; io=$(( c * s > 16 ? 16 : c * s ))  # one I/O thread per socket, as raw TCP has
      raw=true; [ "$cfg" = "$cs" ] || raw=false                  # the ceiling once per socket count
      log "GpuPairBench GPU0 -> GPU1, $c channels x $s sockets, $io I/O threads, chunk ${chunk:-512K}, ${kind:-VRAM}"
      timeout 240 $J -cp "$CP" io.tcpx4j.it.gpu.GpuPairBench --gpu 0 --peer-gpu 1 --channels $c --sockets $s \
        --io-threads $io --chunk ${chunk:-512K} --kind ${kind:-VRAM} --raw $raw --sizes "$SIZES" \
        --reps ${PAIR_REPS:-3} ${PAIR_ARGS:-} --out "$OUT/pair.jsonl" >> "$OUT/pair.log" 2>&1
      grep "^PROFILE" "$OUT/pair.log" | tail -4 | tee -a "$OUT/run.log"
      log "pair $cfg exit $?"
    done
    ;;
  ab)
    for round in $(seq 1 "${AB_ROUNDS:-2}"); do
      raw=true
      for cfg in ${AB_CONFIGS:-4x4 8x2}; do
        IFS=: read -r cs chunk <<< "$cfg"
        c=${cs%x*}; s=${cs#*x}; io=$(( c * s > 16 ? 16 : c * s ))
        vs=$(ls variants); [ $((round % 2)) = 1 ] || vs=$(ls variants | tac)   # ABBA against drift
        for v in $vs; do
          log "A/B round $round: $v, $c channels x $s sockets, $io I/O threads, chunk ${chunk:-512K}, raw $raw"
          timeout 120 $J -cp "$(variant_cp "$v")" io.tcpx4j.it.gpu.GpuPairBench --gpu 0 --peer-gpu 1 --channels $c \
            --sockets $s --io-threads $io --chunk ${chunk:-512K} --raw $raw --sizes "$SIZES" --reps ${PAIR_REPS:-3} \
            --label "$v-$cs${chunk:+-$chunk}" ${PAIR_ARGS:-} --out "$OUT/pair.jsonl" >> "$OUT/pair.log" 2>&1
          log "A/B $v $cfg exit $?"
          raw=false
        done
      done
    done
    ;;
  nccl)
    for socks in ${NCCL_SOCKS:-0:0 4:4}; do
      IFS=: read -r ns nt <<< "$socks"
      log "nccl_socket_bench.py nsocks=$ns nthreads=$nt (0 = NCCL default)"
      PYTHONUNBUFFERED=1 timeout 200 python3 nccl_socket_bench.py --sizes "${NCCL_SIZES:-$SIZES}" \
        --iters ${NCCL_ITERS:-50} --nsocks $ns --nthreads $nt 2>> "$OUT/pair.log" | tee -a "$OUT/nccl.jsonl"
      log "nccl exit ${PIPESTATUS[0]}"
    done
    ;;
  plot)
    python3 plot_gpu_pair.py "$OUT/gpu-pair.png" "$OUT"/pair.jsonl "$OUT"/nccl.jsonl 2>&1 | tee -a "$OUT/run.log"
    ;;
  *) echo "unknown stage $stage" >&2 ;;
  esac
done
if [ -f "$OUT/pair.jsonl" ]; then
  log "pair results"; cat "$OUT/pair.jsonl" | tee -a "$OUT/run.log" > /dev/null
  python3 - "$OUT/pair.jsonl" <<'PY' | tee -a "$OUT/run.log"
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%-18s %-6s %10d B  %8.3f GB/s  (%.3f..%.3f) verified=%s" % (r["system"], r["op"], r["bytes"], r["gbps"], r["min_gbps"], r["max_gbps"], r["verified"]))
PY
fi
log "done"
