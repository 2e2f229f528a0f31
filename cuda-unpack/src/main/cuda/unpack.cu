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
// Each warp takes a unit of `per_warp` consecutive records (lane j fetches record j of the unit:
// coalesced, also from host memory); the host sizes units to about 8 KiB of payload and the grid
// to cover all units, so the block scheduler evens out the load. A warp copies whole 4 KiB pages
// with 8 unpredicated 16-byte loads per lane, issuing the next page's loads before the current
// page's stores; other records one at a time, or several at once in teams of 4 to 16 lanes when
// they are short.
//
// Regenerate the PTX resource with gen-ptx.sh (it lowers the header to PTX ISA 8.2 so that R535
// drivers can JIT it; a test checks that the body still assembles under that header).

#define WARP 32u
#define FULL_MASK 0xffffffffu

typedef unsigned long long u64;
typedef unsigned int u32;

// Sizing of the shipped kernel; each may be overridden with -D through gen-ptx.sh's extra flags.
// UNROLL: loads per lane in flight on the non-page paths (16-byte; 8-byte on the shifted path for
// mutually misaligned records). BLOCK_THREADS: threads per block, exported as
// tcpx4j_block_threads, which the host launches with. MIN_BLOCKS: resident blocks per SM the
// register budget must allow. UNIT_MAX: the largest unit (records per warp) the kernel takes,
// exported as tcpx4j_records_per_warp (the host caps its units there). docs/PERFORMANCE.md
// ("cuda-unpack") has the measurements behind the defaults.
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif
#ifndef UNIT_MAX
#define UNIT_MAX 8u
#endif
extern "C" __device__ u32 tcpx4j_block_threads = BLOCK_THREADS;
extern "C" __device__ u32 tcpx4j_records_per_warp = UNIT_MAX;

// Loads through the read-only data cache; stores write back.
#define LOAD(p) __ldg(p)
#define STORE(p, v) __stwb(p, v)

// The lanes that copy one fragment together: `size` consecutive lanes (4, 8, 16 or 32), this
// lane's index among them, and their shuffle mask.
struct Team {
    u32 size;
    u32 lane;
    u32 mask;
};

// Direct path for source and destination with the same alignment modulo sizeof(T): every lane
// issues all U of its loads before its first store, so U * size loads are in flight per team.
template <typename T, int U>
__device__ __forceinline__ void copy_direct(const char* __restrict__ src, char* __restrict__ dst,
                                            u32 n, Team t) {
    const T* __restrict__ s = reinterpret_cast<const T*>(src) + t.lane;
    T* __restrict__ d = reinterpret_cast<T*>(dst) + t.lane;
    const int step = (int)t.size;
#pragma unroll 1
    for (int left = (int)n - (int)t.lane; left > 0; left -= step * U, s += step * U, d += step * U) {
        T v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (u * step < left) v[u] = LOAD(s + u * step);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (u * step < left) STORE(d + u * step, v[u]);
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
                                             u32 nw, Team t) {
    const u32 r = (u32)((u64)src & 7u);
    const u32 lo_shift = r * 8u;
    const u32 hi_shift = 64u - lo_shift;
    const u64* __restrict__ s = reinterpret_cast<const u64*>(src - r) + t.lane;
    u64* __restrict__ d = reinterpret_cast<u64*>(dst) + t.lane;
    const int step = (int)t.size;
    const u32 last = t.size - 1u;
    // Destination word k needs source words k and k+1, so source words 0..nw are read. The loop
    // condition is the same for the whole team (left + lane = words still to go).
#pragma unroll 1
    for (int left = (int)nw - (int)t.lane; left + (int)t.lane > 0;
         left -= step * U, s += step * U, d += step * U) {
        u64 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            v[u] = u * step <= left ? LOAD(s + u * step) : 0ull;
        }
        // The team's last lane takes its upper word of the last group from the next round.
        const int after = U * step - (int)last;
        u64 extra = (t.lane == last && after <= left) ? LOAD(s + after) : 0ull;
#pragma unroll
        for (int u = 0; u < U; u++) {
            u64 next = __shfl_down_sync(t.mask, v[u], 1, t.size);
            u64 carry = (u + 1 < U) ? __shfl_sync(t.mask, v[u + 1 < U ? u + 1 : u], 0, t.size) : extra;
            if (t.lane == last) next = carry;
            if (u * step < left) STORE(d + u * step, (v[u] >> lo_shift) | (next << hi_shift));
        }
    }
}

// Bytes one lane each; n < 16.
__device__ __forceinline__ void copy_bytes(const char* __restrict__ src, char* __restrict__ dst,
                                           u32 n, Team t) {
    for (u32 i = t.lane; i < n; i += t.size) {
        STORE(reinterpret_cast<unsigned char*>(dst) + i, LOAD(reinterpret_cast<const unsigned char*>(src) + i));
    }
}

// Below this many bytes the shifted path's shuffles cost more than byte-wide copies save.
#define SHIFTED_MIN 64u

__device__ __forceinline__ void copy_fragment(u64 src_addr, u64 dst_addr, u32 len, Team t) {
    const char* src = reinterpret_cast<const char*>(src_addr);
    char* dst = reinterpret_cast<char*>(dst_addr);
    const u64 x = src_addr ^ dst_addr;
    // Widest unit both addresses can be aligned to at once.
    const u32 common = (x & 15u) == 0 ? 16u : (x & 7u) == 0 ? 8u : (x & 3u) == 0 ? 4u : (x & 1u) == 0 ? 2u : 1u;
    const bool shifted = common < 4u && len >= SHIFTED_MIN;
    const u32 align = shifted ? 8u : common;
    u32 head = (u32)((0ull - dst_addr) & (u64)(align - 1u));
    if (head > len) head = len;
    copy_bytes(src, dst, head, t);
    src += head;
    dst += head;
    len -= head;
    u32 body;
    if (shifted) {
        body = len & ~7u;
        copy_shifted<UNROLL>(src, dst, body >> 3, t);
    } else if (common == 16u) {
        body = len & ~15u;
        copy_direct<uint4, UNROLL>(src, dst, body >> 4, t);
    } else if (common == 8u) {
        body = len & ~7u;
        copy_direct<u64, UNROLL>(src, dst, body >> 3, t);
    } else if (common == 4u) {
        body = len & ~3u;
        copy_direct<u32, UNROLL>(src, dst, body >> 2, t);
    } else if (common == 2u) {
        body = len & ~1u;
        copy_direct<unsigned short, UNROLL>(src, dst, body >> 1, t);
    } else {
        body = len;
        copy_direct<unsigned char, UNROLL>(src, dst, body, t);
    }
    copy_bytes(src + body, dst + body, len - body, t);
}

#define PAGE 4096u
#define PAGE_LOADS 8 // 16-byte loads per lane for one 4 KiB page: 32 lanes x 8 x 16 B

__device__ __forceinline__ bool is_page(u64 src, u64 dst, u32 len) {
    return len == PAGE && ((src | dst) & 15u) == 0;
}

__device__ __forceinline__ void page_load(uint4 (&v)[PAGE_LOADS], u64 src, u32 lane) {
    const uint4* __restrict__ s = reinterpret_cast<const uint4*>(src) + lane;
#pragma unroll
    for (int u = 0; u < PAGE_LOADS; u++) v[u] = LOAD(s + u * WARP);
}

__device__ __forceinline__ void page_store(const uint4 (&v)[PAGE_LOADS], u64 dst, u32 lane) {
    uint4* __restrict__ d = reinterpret_cast<uint4*>(dst) + lane;
#pragma unroll
    for (int u = 0; u < PAGE_LOADS; u++) STORE(d + u * WARP, v[u]);
}

// Copies the `count` (<= 32) records of one unit; lane j holds record j in (s, d, l).
__device__ __forceinline__ void copy_unit(u64 s, u64 d, u32 l, u32 count, u32 lane) {
    // Small fragments alone cannot keep enough bytes in flight per warp (a warp waits a
    // whole memory latency per fragment): split the warp into teams that copy several
    // fragments at once.
    const u32 longest = __reduce_max_sync(FULL_MASK, l);
    const u32 size = longest > 2048u ? 32u : longest > 1024u ? 16u : longest > 512u ? 8u : 4u;
    if (size == WARP) {
        // Pages: the loads of page j+1 go out before the stores of page j.
        uint4 cur[PAGE_LOADS];
        u64 pending = 0; // destination of the page held in cur
        bool held = false;
#pragma unroll 1
        for (u32 j = 0; j < count; j++) {
            const u64 src = __shfl_sync(FULL_MASK, s, j);
            const u64 dst = __shfl_sync(FULL_MASK, d, j);
            const u32 len = __shfl_sync(FULL_MASK, l, j);
            if (is_page(src, dst, len)) {
                uint4 next[PAGE_LOADS];
                page_load(next, src, lane);
                if (held) page_store(cur, pending, lane);
#pragma unroll
                for (int u = 0; u < PAGE_LOADS; u++) cur[u] = next[u];
                pending = dst;
                held = true;
            } else {
                if (held) page_store(cur, pending, lane);
                held = false;
                Team t;
                t.size = WARP;
                t.lane = lane;
                t.mask = FULL_MASK;
                copy_fragment(src, dst, len, t);
            }
        }
        if (held) page_store(cur, pending, lane);
        return;
    }
    Team t;
    t.size = size;
    t.lane = lane & (size - 1u);
    t.mask = size == WARP ? FULL_MASK : ((1u << size) - 1u) << (lane & ~(size - 1u));
    const u32 teams = WARP / size;
    const u32 team = lane / size;
    // Not unrolled: each copy_fragment is large, and unrolled copies only cost registers.
#pragma unroll 1
    for (u32 base = 0; base < count; base += teams) {
        const u32 j = base + team;
        const u64 src = __shfl_sync(FULL_MASK, s, j & (WARP - 1u));
        const u64 dst = __shfl_sync(FULL_MASK, d, j & (WARP - 1u));
        const u32 len = __shfl_sync(FULL_MASK, l, j & (WARP - 1u));
        if (j < count) copy_fragment(src, dst, len, t);
    }
}

// Lane j < count of the unit starting at record `first` fetches record first + j: three coalesced
// reads (also when the table sits in host memory).
__device__ __forceinline__ u32 fetch_unit(const u64* __restrict__ table, u32 capacity, u64 first, u32 n, u32 g,
                                          u32 lane, u64& s, u64& d, u32& l) {
    const u64 end = first + g < n ? first + g : n;
    const u64 mine = first + lane;
    s = 0;
    d = 0;
    l = 0;
    if (mine < end) {
        s = table[mine];
        d = table[capacity + mine];
        l = reinterpret_cast<const u32*>(table + 2ull * capacity)[mine];
    }
    return first < end ? (u32)(end - first) : 0u;
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
tcpx4j_unpack(const u64* __restrict__ table, u32 capacity, u32 n, u32 per_warp) {
    const u32 lane = threadIdx.x & (WARP - 1u);
    // Records per unit.
    const u32 g = per_warp == 0 ? 1u : per_warp > WARP ? WARP : per_warp;
    // Unit u to warp u of a grid the host sizes to cover all units (and u + nwarps, ... if short).
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / WARP;
    const u64 nwarps = ((u64)gridDim.x * blockDim.x) / WARP;
#pragma unroll 1
    for (u64 first = warp * g; first < n; first += nwarps * g) {
        u64 s, d;
        u32 l;
        const u32 count = fetch_unit(table, capacity, first, n, g, lane, s, d, l);
        copy_unit(s, d, l, count, lane);
    }
}
