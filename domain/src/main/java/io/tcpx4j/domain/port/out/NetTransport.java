package io.tcpx4j.domain.port.out;

import io.tcpx4j.api.TransferException;
import io.tcpx4j.api.Transport;

import java.util.Set;

/**
 * A two-sided network transport shaped like the NCCL net plugin API (ncclNet v7), so that TCPX maps
 * 1:1 and test transports can be exactly as strict.
 *
 * <p>Contract (every adapter, checked by the transport TCK):
 * <ul>
 *   <li>No method blocks on the peer. {@link #connect} and {@link #accept} return {@code null} until
 *       the peer is there; the caller retries later (no busy spin on its thread). {@code close*} may wait
 *       briefly until the adapter no longer touches the caller's memory.</li>
 *   <li>{@link #isend} / {@link #irecv} return {@code null} (BUSY) when the comm's 16 request slots
 *       are taken or the comm is not fully connected yet. A receive holds its slot until consumed.</li>
 *   <li>Sends and receives on one comm match in posting order; tags are bookkeeping only. A send
 *       larger than its matched receive fails that receive (BACKEND) and the connection with it.</li>
 *   <li>{@link #test} may be called only on the oldest uncompleted request of its comm (FIFO); receives
 *       are consumed in the same order with {@link #consumed}, after their fragments were unpacked.</li>
 *   <li>Completions are asynchronous: a request never completes inside the call that posted it.</li>
 *   <li>Registrations are per comm. CUDA ranges must be 4 KiB aligned (start and length).</li>
 *   <li>Errors are {@link TransferException}s: REMOTE_DISCONNECT when the peer went away, BACKEND for
 *       other transport failures, INVALID_PARAM for misuse, NOT_SUPPORTED for an undeclared capability.</li>
 *   <li>Optional abilities are {@link Capability capabilities}: a transport declares those it has, and
 *       asking for an undeclared one fails with NOT_SUPPORTED.</li>
 * </ul>
 *
 * <p>Lifecycle. A comm lives from the {@code connect} or {@code accept} that returned it until
 * {@link #closeSend} or {@link #closeRecv}; the transport lives until {@link #close()}, which closes
 * every comm and listener it still has. Closing a comm ends its requests in flight at once, whatever
 * their state: before {@code close*} returns, the transport has stopped reading and writing their
 * memory, and from then on those requests are void: {@link #test} and {@link #consumed} on them throw
 * INVALID_PARAM (none of them ever reports done after the close), and so do further posts and
 * registrations on the comm (closing it again does nothing). Its registrations go with it. Nothing waits for the peer: data still in flight may be lost,
 * and the peer's requests that wait for more fail with REMOTE_DISCONNECT. After {@link #close()},
 * every call that listens, connects, accepts, registers, posts, tests or consumes throws INVALID_PARAM
 * ({@code name}, {@code capabilities}, {@code deviceCount} and {@code properties} may still answer), and
 * {@code close} again does nothing.
 *
 * <p>Implementations are <b>not required to be thread-safe per comm</b>: the engine drives each comm
 * from one thread at a time. Different comms may be driven from different threads.
 */
public interface NetTransport extends Transport {

    /** Request slots per comm (TCPX: 16). */
    int MAX_REQUESTS = 16;
    /** Alignment of CUDA registrations. */
    int CUDA_ALIGNMENT = 4096;

    /** Short name, e.g. {@code loopback} or {@code tcpx}. */
    String name();

    /** What every device of this transport can do; see {@link #capabilities(int)} for one device. */
    Set<Capability> capabilities();

    /**
     * What {@code device} can do: a real plugin's devices differ (CUDA memory needs a NIC with a PCI
     * path), so a caller asks the device it uses. Contains {@link #capabilities()}. A device out of
     * range is INVALID_PARAM. Default: the transport's set, for transports whose devices are alike.
     */
    default Set<Capability> capabilities(int device) {
        if (device < 0 || device >= deviceCount()) {
            throw new TransferException(TransferException.Code.INVALID_PARAM,
                    "device " + device + " out of range 0.." + (deviceCount() - 1));
        }
        return capabilities();
    }

    /** Number of network devices. */
    int deviceCount();

    DeviceProperties properties(int device);

    /** Starts listening on a device. */
    Listener listen(int device);

    /**
     * Starts listening on a device for a comm that {@code driver}'s thread will drive. With
     * {@link Capability#DRIVER_SOCKETS} the listener and the comm it yields register their sockets with
     * {@code driver}; other transports ignore it (default: {@link #listen(int)}).
     */
    default Listener listen(int device, DriverSelector driver) {
        return listen(device);
    }

    /**
     * Connects to a peer's listener handle (128 bytes). Returns {@code null} until connected. Calling
     * again with equal handle bytes resumes the same attempt (TCPX keeps connect's progress in the
     * handle); a failed attempt throws once, and a later call starts over.
     */
    SendComm connect(int device, byte[] handle);

    /**
     * {@link #connect(int, byte[])} for a comm that {@code driver}'s thread will drive: with
     * {@link Capability#DRIVER_SOCKETS} the connect and the comm register their sockets with {@code driver}
     * (the first call of an attempt decides); other transports ignore it (default).
     */
    default SendComm connect(int device, byte[] handle, DriverSelector driver) {
        return connect(device, handle);
    }

    /**
     * Accepts the listener's connection. Returns {@code null} until it arrives. A listener yields
     * exactly one comm: once accept returned it, a further accept is INVALID_PARAM (TCPX frees its
     * accept state on success, so a second accept would free it again). Close the listener after.
     */
    RecvComm accept(Listener listener);

    /** Registers memory on one comm. CUDA memory must be 4 KiB aligned in start and size. */
    MemoryRegistration register(Comm comm, long address, long size, PtrType type);

    /**
     * Drops a registration; requests may no longer name it. The caller must not deregister memory that
     * unfinished requests still use: TCPX does not check it, and what those requests then move is
     * undefined.
     */
    void deregister(Comm comm, MemoryRegistration registration);

    /** Posts a send; {@code null} means BUSY (retry later). */
    NetRequest isend(SendComm comm, long address, int size, int tag, MemoryRegistration registration);

    /** Posts a receive; {@code null} means BUSY (retry later). */
    NetRequest irecv(RecvComm comm, long address, int size, int tag, MemoryRegistration registration);

    /**
     * Whether the oldest uncompleted request of its comm is done. Throws if it failed; a request whose
     * test threw is finished (its slot is released; it must not be tested again or consumed). Testing a
     * request already reported done is INVALID_PARAM.
     */
    boolean test(NetRequest request);

    /** Hands a completed receive (and its bounce pages) back. Oldest first. */
    void consumed(RecvComm comm, NetRequest request);

    /** Closes a send comm, voiding its requests in flight (see the lifecycle above). */
    void closeSend(SendComm comm);

    /** Closes a receive comm, voiding its requests in flight (see the lifecycle above). */
    void closeRecv(RecvComm comm);

    /** Closes a listener; a later {@code accept} on it is INVALID_PARAM. A comm it yielded stays open. */
    void closeListen(Listener listener);

    /**
     * With {@link Capability#PROGRESS_WAKEUPS}: calls {@code wake} whenever a request of this transport
     * may have completed or failed, a comm failed, or a pending connect or accept may have become ready,
     * so that a waiting engine reacts at once. {@code wake} is cheap and thread-safe; the transport calls
     * it from any of its threads, holding no lock. Several engines may share one transport: each call
     * adds a wake-up. Returns what removes it; after that has run, no new event calls it (a call already
     * under way may still finish). Default, for transports without the capability: NOT_SUPPORTED.
     */
    default Runnable wakeOnProgress(Runnable wake) {
        throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                name() + " does not announce progress: poll it while requests are out");
    }

    /**
     * Closes every comm and listener and frees the transport, voiding every request in flight (see the
     * lifecycle above). Idempotent.
     */
    @Override
    void close();
}
