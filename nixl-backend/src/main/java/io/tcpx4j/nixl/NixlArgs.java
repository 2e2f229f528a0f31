package io.tcpx4j.nixl;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.TransferException.Code;

/**
 * Checks and conversions of the arguments NIXL passes to a {@link NixlBackend}, shared by the backend,
 * {@link MetadataTable} and {@link TransferHandles}. Every failure is a {@link TransferException} with
 * the code whose NIXL status the caller answers.
 *
 * <p>Stateless and thread-safe.
 */
final class NixlArgs {

    private NixlArgs() {
    }

    /** One range in NIXL's terms as a descriptor; NOT_SUPPORTED for a memory type other than DRAM or VRAM. */
    static MemoryDescriptor descriptor(long addr, long len, int devId, int memType) {
        MemoryKind kind = switch (memType) {
            case NixlBackend.DRAM_SEG -> MemoryKind.DRAM;
            case NixlBackend.VRAM_SEG -> MemoryKind.VRAM;
            default -> throw new TransferException(Code.NOT_SUPPORTED,
                    "memory type " + memType + ": TCPX moves DRAM_SEG and VRAM_SEG only");
        };
        return new MemoryDescriptor(addr, len, kind, devId);
    }

    static void requireOut(Object[] out) {
        if (out == null || out.length < 1) {
            throw new TransferException(Code.INVALID_PARAM, "no output array");
        }
    }

    static void requireOut(long[] out) {
        if (out == null || out.length < 1) {
            throw new TransferException(Code.INVALID_PARAM, "no output array");
        }
    }

    static void requireAgent(String agent) {
        if (agent == null || agent.isEmpty()) {
            throw new TransferException(Code.INVALID_PARAM, "no agent name");
        }
    }
}
