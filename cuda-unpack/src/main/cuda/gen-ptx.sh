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
# ARCH=90 builds for `.target sm_90` instead (compute_90, checked by ptxas for sm_90 only): for
# variants that use Hopper's bulk copy engine (-DBULK=1), which sm_80 lacks.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../resources/io/tcpx4j/cuda/unpack.ptx}
[ $# -gt 0 ] && shift
nvcc=${NVCC:-nvcc}
ptxas=$(dirname "$(command -v "$nvcc")")/ptxas
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arch=${ARCH:-80}
"$nvcc" -ptx -arch=compute_$arch -O3 "$@" -o "$tmp/raw.ptx" "$here/unpack.cu"
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
' "$tmp/raw.ptx" > "$tmp/unpack.ptx"
"$ptxas" -arch=sm_90 -o /dev/null "$tmp/unpack.ptx"
[ "$arch" -ge 90 ] || "$ptxas" -arch=sm_80 -o /dev/null "$tmp/unpack.ptx"
cp "$tmp/unpack.ptx" "$out"
