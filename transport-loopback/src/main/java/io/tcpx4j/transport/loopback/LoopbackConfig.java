package io.tcpx4j.transport.loopback;

import io.tcpx4j.api.TransferException;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link LoopbackTransport}. Validated on construction (INVALID_PARAM with the rule that
 * was broken); nothing here does I/O, so a bad host name surfaces at the first {@code listen}.
 *
 * @param bindHost           interface listeners bind and handles advertise, e.g. {@code 127.0.0.1}
 *                           (default) or the address of a real NIC
 * @param devices            network devices the transport reports, 1..64 (all use {@code bindHost})
 * @param socketsPerComm     TCP sockets per comm, 1..16; every message is striped over all of them in
 *                           4 KiB-aligned parts (TCPX's NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS)
 * @param devmem             whether every receive lands in permuted 4 KiB bounce pages that the caller
 *                           unpacks (TCPX's devmem path); CUDA receives always do
 * @param bouncePagesPerComm 4 KiB bounce pages per receive comm, 2048..1048576; at least one maximal
 *                           receive (2048 pages) must fit, and page offsets must fit a u32
 * @param ioThreads          I/O threads per transport, 0..16; 0: none, the thread that drives a comm moves
 *                           its bytes inside its calls and blocks on its own selector for them
 *                           ({@link io.tcpx4j.domain.port.out.Capability#DRIVER_SOCKETS})
 * @param faults             fault injection, {@link Faults#NONE} for none
 */
public record LoopbackConfig(String bindHost, int devices, int socketsPerComm, boolean devmem,
                             int bouncePagesPerComm, int ioThreads, Faults faults) {

    /** 8192 pages = 32 MiB: 16 receives of 2 MiB, or 8 of the engine's 4 MiB maximum chunk. */
    public static final int DEFAULT_BOUNCE_PAGES = 8192;

    public LoopbackConfig {
        require(bindHost != null && !bindHost.isBlank(), "bindHost must be a host name or address");
        require(devices >= 1 && devices <= 64, "devices must be 1..64, was " + devices);
        require(socketsPerComm >= 1 && socketsPerComm <= 16, "socketsPerComm must be 1..16, was " + socketsPerComm);
        require(bouncePagesPerComm >= 2048 && bouncePagesPerComm <= (1 << 20),
                "bouncePagesPerComm must be 2048..1048576 (one maximal receive must fit; offsets are u32), was "
                        + bouncePagesPerComm);
        require(ioThreads >= 0 && ioThreads <= 16, "ioThreads must be 0..16, was " + ioThreads);
        require(faults != null, "faults must not be null (use Faults.NONE)");
    }

    /**
     * 127.0.0.1, one device, 2 sockets per comm, devmem on (faithful by default), 2 I/O threads, no faults.
     */
    public static LoopbackConfig defaults() {
        return new LoopbackConfig("127.0.0.1", 1, 2, true, DEFAULT_BOUNCE_PAGES, 2, Faults.NONE);
    }

    public LoopbackConfig withBindHost(String v) {
        return new LoopbackConfig(v, devices, socketsPerComm, devmem, bouncePagesPerComm, ioThreads, faults);
    }

    public LoopbackConfig withDevices(int v) {
        return new LoopbackConfig(bindHost, v, socketsPerComm, devmem, bouncePagesPerComm, ioThreads, faults);
    }

    public LoopbackConfig withSocketsPerComm(int v) {
        return new LoopbackConfig(bindHost, devices, v, devmem, bouncePagesPerComm, ioThreads, faults);
    }

    public LoopbackConfig withDevmem(boolean v) {
        return new LoopbackConfig(bindHost, devices, socketsPerComm, v, bouncePagesPerComm, ioThreads, faults);
    }

    public LoopbackConfig withBouncePagesPerComm(int v) {
        return new LoopbackConfig(bindHost, devices, socketsPerComm, devmem, v, ioThreads, faults);
    }

    public LoopbackConfig withIoThreads(int v) {
        return new LoopbackConfig(bindHost, devices, socketsPerComm, devmem, bouncePagesPerComm, v, faults);
    }

    public LoopbackConfig withFaults(Faults v) {
        return new LoopbackConfig(bindHost, devices, socketsPerComm, devmem, bouncePagesPerComm, ioThreads, v);
    }

    /**
     * Faults to inject, for tests of failure handling.
     *
     * @param dropAfterBytes  a send comm aborts its connection (TCP reset) once it has written at least
     *                        this many payload-and-header bytes; -1 never
     * @param completionDelay every request tests done only this long after its data moved; zero for none
     * @param corruptHandle   listeners publish handles with one byte flipped, so that connects to them
     *                        fail with INVALID_PARAM
     */
    public record Faults(long dropAfterBytes, Duration completionDelay, boolean corruptHandle) {

        public static final Faults NONE = new Faults(-1, Duration.ZERO, false);

        public Faults {
            require(dropAfterBytes >= -1, "dropAfterBytes must be -1 (off) or at least 0, was " + dropAfterBytes);
            Objects.requireNonNull(completionDelay, "completionDelay");
            require(!completionDelay.isNegative() && completionDelay.compareTo(Duration.ofMinutes(1)) <= 0,
                    "completionDelay must be 0..1 min, was " + completionDelay);
        }
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new TransferException(TransferException.Code.INVALID_PARAM, "LoopbackConfig: " + message);
        }
    }
}
