package io.tcpx4j.domain.protocol;

import io.tcpx4j.api.MemoryDescriptor;
import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.api.TransferException;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The public metadata of a registered region: owner engine and range. Binary layout (big-endian):
 * magic "TX4M", u8 version 1, owner name (u8 len + UTF-8), u8 kind (0 DRAM, 1 VRAM), u32 device,
 * u64 address, u64 length.
 */
public record RegionMetadata(String owner, MemoryDescriptor region) {

    private static final int MAGIC = 0x5458344D; // "TX4M"
    private static final int VERSION = 1;

    public RegionMetadata {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(region, "region");
    }

    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + Wire.nameSize(owner) + 1 + 4 + 8 + 8);
        b.putInt(MAGIC).put((byte) VERSION);
        Wire.putName(b, owner);
        b.put((byte) region.kind().ordinal()).putInt(region.device()).putLong(region.address()).putLong(region.length());
        return b.array();
    }

    public static RegionMetadata decode(byte[] bytes) {
        Wire w = Wire.of(bytes, "region metadata");
        if (w.i32() != MAGIC) {
            throw Wire.bad("region metadata", "not tcpx4j metadata (bad magic)");
        }
        int version = w.u8();
        if (version != VERSION) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "region metadata version " + version + " (this build reads " + VERSION + ")");
        }
        String owner = w.name();
        int kind = w.u8();
        if (kind >= MemoryKind.values().length) {
            throw Wire.bad("region metadata", "memory kind " + kind);
        }
        int device = w.i32();
        long address = w.i64();
        long length = w.i64();
        w.end();
        if (device < 0 || length < 0) {
            throw Wire.bad("region metadata", "negative device or length");
        }
        if (length > 0 && Long.compareUnsigned(address + length, address) < 0) {
            throw Wire.bad("region metadata", "range wraps around the address space");
        }
        return new RegionMetadata(owner, new MemoryDescriptor(address, length, MemoryKind.values()[kind], device));
    }
}
