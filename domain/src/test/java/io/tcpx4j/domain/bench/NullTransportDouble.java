package io.tcpx4j.domain.bench;

import io.tcpx4j.api.MemoryKind;
import io.tcpx4j.domain.port.out.Capability;
import io.tcpx4j.domain.port.out.Comm;
import io.tcpx4j.domain.port.out.DeviceProperties;
import io.tcpx4j.domain.port.out.Listener;
import io.tcpx4j.domain.port.out.MemoryRegistration;
import io.tcpx4j.domain.port.out.NetRequest;
import io.tcpx4j.domain.port.out.NetTransport;
import io.tcpx4j.domain.port.out.PtrType;
import io.tcpx4j.domain.port.out.RecvComm;
import io.tcpx4j.domain.port.out.SendComm;

import java.util.Set;

/**
 * Test double that moves no data: every request is done at its first test. It isolates the
 * engine's own per-chunk cost (windows, rings, bookkeeping) in {@link ChunkPathBench}. Never use it
 * to claim anything about data movement.
 *
 * <p><b>Not thread-safe.</b>
 */
final class NullTransportDouble implements NetTransport {

    private static final class Req implements NetRequest {
        int size;

        @Override public int size() { return size; }
        @Override public int fragmentCount() { return 0; }
        @Override public long fragmentsAddress() { return 0; }
        @Override public long bounceBase() { return 0; }
        @Override public long bounceBytes() { return 0; }
        @Override public MemoryKind bounceKind() { return MemoryKind.DRAM; }
    }

    private static final class C implements SendComm, RecvComm {
        final Req[] pool = new Req[MAX_REQUESTS];
        int next;

        C() {
            for (int i = 0; i < pool.length; i++) {
                pool[i] = new Req();
            }
        }

        Req take(int size) {
            Req r = pool[next++ & (MAX_REQUESTS - 1)];
            r.size = size;
            return r;
        }
    }

    private record L(byte[] handle) implements Listener {
        @Override
        public byte[] handle() {
            return handle.clone();
        }
    }

    private record Mr(long address, long size, PtrType type) implements MemoryRegistration {
    }

    @Override public String name() { return "null"; }
    @Override public Set<Capability> capabilities() { return Set.of(); }
    @Override public int deviceCount() { return 1; }

    @Override
    public DeviceProperties properties(int device) {
        return new DeviceProperties("null0", "", 0, Set.of(PtrType.HOST), 100_000, 0, 0, 64, 1, 0, 0);
    }

    @Override public Listener listen(int device) { return new L(new byte[Listener.HANDLE_SIZE]); }
    @Override public SendComm connect(int device, byte[] handle) { return new C(); }
    @Override public RecvComm accept(Listener listener) { return new C(); }
    @Override public MemoryRegistration register(Comm comm, long address, long size, PtrType type) { return new Mr(address, size, type); }
    @Override public void deregister(Comm comm, MemoryRegistration registration) { }
    @Override public NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration mr) { return ((C) comm).take(size); }
    @Override public NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration mr) { return ((C) comm).take(size); }
    @Override public boolean test(NetRequest request) { return true; }
    @Override public void consumed(RecvComm comm, NetRequest request) { }
    @Override public void closeSend(SendComm comm) { }
    @Override public void closeRecv(RecvComm comm) { }
    @Override public void closeListen(Listener listener) { }
    @Override public void close() { }
}
