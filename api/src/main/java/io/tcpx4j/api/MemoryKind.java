package io.tcpx4j.api;

/** Where a memory range lives. */
public enum MemoryKind {
    /** Host memory (any native address the process may read and write). */
    DRAM,
    /** GPU device memory (a CUDA device pointer). */
    VRAM
}
