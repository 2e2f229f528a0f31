// tcpx4j unpack kernel: scatters the fragments of completed GPUDirect-TCPX receives from their
// bounce pages into place. One launch covers a whole batch of receives.
//
// The host side (io.tcpx4j.cuda.WorkList) validates every fragment and writes a work list of
// absolute addresses as three arrays in one table of `capacity` records (structure of arrays, so a
// warp's 32 lanes each fetch one record in one round trip, even when the table sits in host memory
// mapped for the device):
//   u64 src[capacity]  source address (bounce page + srcOff)
//   u64 dst[capacity]  destination address (destination + dstOff)
//   u32 len[capacity]  byte count, at most 64 KiB (longer fragments are split on the host, which
//                      also lets the copy loops count in 32-bit ints)
// A warp copies one record at a time; records are dealt round-robin to the warps of a grid that
// is sized to be resident at once, so neighbouring warps write neighbouring destinations.
//
// Regenerate the PTX resource with gen-ptx.sh (it lowers the header to PTX ISA 8.2 so that R535
// drivers can JIT it; a test checks that the body still assembles under that header).

#define WARP 32u
#define FULL_MASK 0xffffffffu

typedef unsigned long long u64;
typedef unsigned int u32;

// Direct path for source and destination with the same alignment modulo sizeof(T): every lane
// issues all U of its loads before its first store, so U * 32 loads are in flight per warp.
template <typename T, int U>
__device__ __forceinline__ void copy_direct(const char* __restrict__ src, char* __restrict__ dst,
                                            u32 n, u32 lane) {
    // Per-lane pointers with constant offsets keep the unrolled addresses in the instructions'
    // immediates instead of registers.
    const T* __restrict__ s = reinterpret_cast<const T*>(src) + lane;
    T* __restrict__ d = reinterpret_cast<T*>(dst) + lane;
#pragma unroll 1
    for (int left = (int)n - (int)lane; left > 0; left -= (int)(WARP * U), s += WARP * U, d += WARP * U) {
        T v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (u * (int)WARP < left) v[u] = __ldg(s + u * WARP);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (u * (int)WARP < left) __stwb(d + u * WARP, v[u]);
        }
    }
}

// Path for mutually misaligned source and destination (TCPX lands TCP segments at arbitrary page
// offsets, so odd distances are real): 8-byte aligned stores, each word funnel-shifted from two
// aligned source words. The upper word comes from the neighbouring lane by shuffle, so every
// source word crosses the memory system once (it may be host memory over PCIe). Reads stay inside
// aligned 8-byte words that hold at least one byte of the fragment, so they never touch a page
// the fragment does not. Requires dst 8-byte aligned and src not.
template <int U>
__device__ __forceinline__ void copy_shifted(const char* __restrict__ src, char* __restrict__ dst,
                                             u32 nw, u32 lane) {
    const u32 r = (u32)((u64)src & 7u);
    const u32 lo_shift = r * 8u;
    const u32 hi_shift = 64u - lo_shift;
    const u64* __restrict__ s = reinterpret_cast<const u64*>(src - r) + lane;
    u64* __restrict__ d = reinterpret_cast<u64*>(dst) + lane;
    // Destination word k needs source words k and k+1, so source words 0..nw are read.
#pragma unroll 1
    for (int left = (int)nw - (int)lane; left + (int)lane > 0;
         left -= (int)(WARP * U), s += WARP * U, d += WARP * U) {
        u64 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            v[u] = u * (int)WARP <= left ? __ldg(s + u * WARP) : 0ull;
        }
        // Lane 31's upper word in the last group is the first word of the next round.
        const int after = (int)(U * WARP) - (int)(WARP - 1);
        u64 extra = (lane == WARP - 1 && after <= left) ? __ldg(s + after) : 0ull;
#pragma unroll
        for (int u = 0; u < U; u++) {
            u64 next = __shfl_down_sync(FULL_MASK, v[u], 1);
            u64 carry = (u + 1 < U) ? __shfl_sync(FULL_MASK, v[u + 1 < U ? u + 1 : u], 0) : extra;
            if (lane == WARP - 1) next = carry;
            if (u * (int)WARP < left) __stwb(d + u * WARP, (v[u] >> lo_shift) | (next << hi_shift));
        }
    }
}

// Bytes one lane each; n < 32.
__device__ __forceinline__ void copy_bytes(const char* __restrict__ src, char* __restrict__ dst,
                                           u32 n, u32 lane) {
    if (lane < n) __stwb(reinterpret_cast<unsigned char*>(dst) + lane, __ldg(reinterpret_cast<const unsigned char*>(src) + lane));
}

#ifndef UNROLL
#define UNROLL 8
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif

// Below this many bytes the shifted path's shuffles cost more than byte-wide copies save.
#define SHIFTED_MIN 64u

__device__ __forceinline__ void copy_fragment(u64 src_addr, u64 dst_addr, u32 len, u32 lane) {
    const char* src = reinterpret_cast<const char*>(src_addr);
    char* dst = reinterpret_cast<char*>(dst_addr);
    const u64 x = src_addr ^ dst_addr;
    // Widest unit both addresses can be aligned to at once.
    const u32 common = (x & 15u) == 0 ? 16u : (x & 7u) == 0 ? 8u : (x & 3u) == 0 ? 4u : (x & 1u) == 0 ? 2u : 1u;
    const bool shifted = common < 4u && len >= SHIFTED_MIN;
    const u32 align = shifted ? 8u : common;
    u32 head = (u32)((0ull - dst_addr) & (u64)(align - 1u));
    if (head > len) head = len;
    copy_bytes(src, dst, head, lane);
    src += head;
    dst += head;
    len -= head;
    u32 body;
    if (shifted) {
        body = len & ~7u;
        copy_shifted<UNROLL / 2>(src, dst, body >> 3, lane);
    } else if (common == 16u) {
        body = len & ~15u;
        copy_direct<uint4, UNROLL>(src, dst, body >> 4, lane);
    } else if (common == 8u) {
        body = len & ~7u;
        copy_direct<u64, UNROLL>(src, dst, body >> 3, lane);
    } else if (common == 4u) {
        body = len & ~3u;
        copy_direct<u32, UNROLL>(src, dst, body >> 2, lane);
    } else if (common == 2u) {
        body = len & ~1u;
        copy_direct<unsigned short, UNROLL>(src, dst, body >> 1, lane);
    } else {
        body = len;
        copy_direct<unsigned char, UNROLL>(src, dst, body, lane);
    }
    copy_bytes(src + body, dst + body, len - body, lane);
}

extern "C" __global__ void __launch_bounds__(256, MIN_BLOCKS)
tcpx4j_unpack(const u64* __restrict__ table, u32 capacity, u32 n) {
    const u64* __restrict__ srcs = table;
    const u64* __restrict__ dsts = table + capacity;
    const u32* __restrict__ lens = reinterpret_cast<const u32*>(table + 2ull * capacity);
    const u32 lane = threadIdx.x & (WARP - 1u);
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / WARP;
    const u64 nwarps = ((u64)gridDim.x * blockDim.x) / WARP;
    // This warp's records are warp, warp + nwarps, ...; lane j fetches the j-th of the next 32 of
    // them, so one round trip brings 32 records (the list may be in host memory).
#pragma unroll 1
    for (u64 first = warp; first < n; first += nwarps * WARP) {
        const u64 mine = first + (u64)lane * nwarps;
        u64 s = 0, d = 0;
        u32 l = 0;
        if (mine < n) {
            s = srcs[mine];
            d = dsts[mine];
            l = lens[mine];
        }
        const u64 left = ((u64)n - first + nwarps - 1) / nwarps;
        const u32 count = left < WARP ? (u32)left : WARP;
        // Not unrolled: each copy_fragment is large, and unrolled copies only cost registers.
#pragma unroll 1
        for (u32 j = 0; j < count; j++) {
            const u64 src = __shfl_sync(FULL_MASK, s, j);
            const u64 dst = __shfl_sync(FULL_MASK, d, j);
            const u32 len = __shfl_sync(FULL_MASK, l, j);
            copy_fragment(src, dst, len, lane);
        }
    }
}
