package io.tcpx4j.domain.port.out;

/** A memory registration on one comm (ncclNet mhandle). Valid until deregistered or the comm closes. */
public interface MemoryRegistration {

    long address();

    long size();

    PtrType type();

    /** Whether {@code [addr, addr+len)} lies inside this registration (unsigned, overflow-safe). */
    default boolean covers(long addr, long len) {
        long off = addr - address();
        return len >= 0 && Long.compareUnsigned(addr, address()) >= 0 && Long.compareUnsigned(off, size()) <= 0
                && Long.compareUnsigned(len, size() - off) <= 0;
    }
}
