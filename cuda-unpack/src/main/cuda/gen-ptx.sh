#!/bin/sh
# Regenerates the unpack kernel's PTX resource from unpack.cu.
#
#   gen-ptx.sh [OUTPUT [EXTRA_NVCC_FLAGS...]]
#
# OUTPUT defaults to the checked-in resource. nvcc 13 writes `.version 9.0`, which drivers older
# than CUDA 13 refuse (CUDA_ERROR_UNSUPPORTED_PTX_VERSION); A3 images run R535 (CUDA 12.2, PTX ISA
# 8.2). The kernel uses nothing newer than PTX 8.2, so the header is lowered to `.version 8.2` and
# ptxas, which rejects instructions the declared version lacks, assembles the result for sm_80 and
# sm_90 as proof. The target is compute_80 so that A100s can JIT it too. Needs nvcc and ptxas on
# PATH (or NVCC=/path/to/nvcc).
#
# The output's first line records the SHA-256 of unpack.cu and the nvcc flags; PtxSourceTest
# recomputes it from the sources in every build, so a kernel edited without regenerating fails CI.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../resources/io/tcpx4j/cuda/unpack.ptx}
[ $# -gt 0 ] && shift
nvcc=${NVCC:-nvcc}
ptxas=$(dirname "$(command -v "$nvcc")")/ptxas
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-ptx -arch=compute_80 -O3${*:+ $*}"
# shellcheck disable=SC2086
"$nvcc" $flags -o "$tmp/raw.ptx" "$here/unpack.cu"
source_hash=$(sha256sum "$here/unpack.cu" | cut -d' ' -f1)
{
  echo "// tcpx4j unpack.cu sha256 $source_hash, nvcc flags: $flags"
  awk '
    /^\.version / {
      split($2, v, ".")
      if (v[1] + 0 > 8 || (v[1] + 0 == 8 && v[2] + 0 > 2)) {
        print "// .version lowered from " $2 " to 8.2 by gen-ptx.sh (the body needs no newer PTX; ptxas checked)"
        print ".version 8.2"
        next
      }
    }
    { print }
  ' "$tmp/raw.ptx"
} > "$tmp/unpack.ptx"
"$ptxas" -arch=sm_90 -o /dev/null "$tmp/unpack.ptx"
"$ptxas" -arch=sm_80 -o /dev/null "$tmp/unpack.ptx"
cp "$tmp/unpack.ptx" "$out"
