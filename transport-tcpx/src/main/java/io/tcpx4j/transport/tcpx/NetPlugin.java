package io.tcpx4j.transport.tcpx;

import com.sun.jna.Function;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import io.tcpx4j.api.TransferException;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One loaded net plugin: its library, the table version found by probing, and the table's functions
 * as JNA {@link Function}s read by offset. Calls return the raw ncclResult_t; translating it is the
 * caller's job (it knows whether a 3 means "slots full").
 *
 * <p>Native pointers (comms, requests, memory handles, data addresses, out-parameters of the data
 * path) are passed as {@code long}; we check LP64 before binding, where a 64-bit integer is passed
 * exactly like a pointer. The calls made per chunk (isend, irecv, test, irecvConsumed) go through
 * {@link NetCallTrampolines} when its library is there ({@link CallPath#TRAMPOLINE}): no argument
 * array, no boxing, no allocation. Set-up and registration calls, and every call when the library is
 * missing ({@link CallPath#GENERIC}), go through JNA's {@code Function.invoke}.
 *
 * <p>Thread-safe: it holds no per-call state. Out-parameters are the caller's (one set per comm).
 */
final class NetPlugin {

    /** RTLD_NOW, RTLD_LOCAL (0): unresolved symbols fail at load time with the loader's message. */
    private static final int RTLD_NOW = 2;

    private final String libraryName;
    private final NativeLibrary library;
    private final NetPluginVersion version;
    private final Pointer table;
    private final String name;
    private final Map<NetSlot, Function> functions = new EnumMap<>(NetSlot.class);
    private final CallPath callPath;
    /** The per-chunk entries' addresses for the trampolines (0 where the table's entry is null). */
    private final long isendFn;
    private final long irecvFn;
    private final long testFn;
    private final long irecvConsumedFn;
    private volatile PluginLogger logger;

    /** How the per-chunk calls reach the plugin. */
    enum CallPath {
        /** {@link NetCallTrampolines}: JNI with primitive arguments. */
        TRAMPOLINE,
        /** JNA's {@code Function.invoke(Object[])}: an argument array and boxed values per call. */
        GENERIC;

        /** TRAMPOLINE when its library loaded, else GENERIC. */
        static CallPath best() {
            return NetCallTrampolines.isAvailable() ? TRAMPOLINE : GENERIC;
        }
    }

    private NetPlugin(String libraryName, NativeLibrary library, NetPluginVersion version, Pointer table) {
        this(libraryName, library, version, table, CallPath.best());
    }

    private NetPlugin(String libraryName, NativeLibrary library, NetPluginVersion version, Pointer table,
                      CallPath callPath) {
        if (callPath == CallPath.TRAMPOLINE && !NetCallTrampolines.isAvailable()) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED, "the net-call trampolines are not"
                    + " available: " + NetCallTrampolines.unavailabilityCause());
        }
        this.libraryName = libraryName;
        this.library = library;
        this.version = version;
        this.table = table;
        this.callPath = callPath;
        Pointer namePtr = table.getPointer(version.offset(NetSlot.NAME));
        this.name = namePtr == null ? "(unnamed)" : namePtr.getString(0);
        for (NetSlot slot : version.order()) {
            if (slot == NetSlot.NAME) {
                continue;
            }
            Pointer fp = table.getPointer(version.offset(slot));
            if (fp != null) {
                functions.put(slot, Function.getFunction(fp));
            }
        }
        for (NetSlot required : List.of(NetSlot.INIT, NetSlot.DEVICES, NetSlot.GET_PROPERTIES, NetSlot.LISTEN,
                NetSlot.CONNECT, NetSlot.ACCEPT, NetSlot.REG_MR, NetSlot.DEREG_MR, NetSlot.ISEND, NetSlot.IRECV,
                NetSlot.TEST, NetSlot.CLOSE_SEND, NetSlot.CLOSE_RECV, NetSlot.CLOSE_LISTEN)) {
            if (!functions.containsKey(required)) {
                throw new TransferException(TransferException.Code.NOT_SUPPORTED, libraryName + ": table "
                        + version.symbol() + " has a null " + required + " entry; not a usable net plugin");
            }
        }
        // getDeviceMr and irecvConsumed (v7+) may be null: NCCL calls them only when present, and
        // aws-ofi-nccl leaves both null. TcpxTransport calls irecvConsumed only when it is there.
        this.isendFn = address(NetSlot.ISEND);
        this.irecvFn = address(NetSlot.IRECV);
        this.testFn = address(NetSlot.TEST);
        this.irecvConsumedFn = address(NetSlot.IRECV_CONSUMED);
    }

    private long address(NetSlot slot) {
        Function f = functions.get(slot);
        return f == null ? 0 : Pointer.nativeValue(f);
    }

    /**
     * The same plugin (library, table, logger) whose per-chunk calls take {@code path}; for tests
     * and the benchmark that compares the two. TRAMPOLINE without its library is NOT_SUPPORTED.
     */
    NetPlugin withCallPath(CallPath path) {
        if (path == callPath) {
            return this;
        }
        NetPlugin p = new NetPlugin(libraryName, library, version, table, path);
        p.logger = logger;
        return p;
    }

    CallPath callPath() {
        return callPath;
    }

    /**
     * Opens a library (a path, or a name for the dynamic loader) and binds the newest table it
     * exports. Throws NOT_SUPPORTED when it cannot be opened or exports no known table.
     */
    static NetPlugin open(String libraryName) {
        return bind(libraryName, load(libraryName));
    }

    /** dlopen, RTLD_NOW. Throws NOT_SUPPORTED with the loader's message. */
    static NativeLibrary load(String libraryName) {
        if (Native.POINTER_SIZE != 8 || Native.LONG_SIZE != 8) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "the TCPX binding needs a 64-bit (LP64) JVM; this one has " + Native.POINTER_SIZE + "-byte pointers");
        }
        try {
            return NativeLibrary.getInstance(libraryName, Map.of(Library.OPTION_OPEN_FLAGS, RTLD_NOW));
        } catch (UnsatisfiedLinkError e) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED,
                    "cannot load " + libraryName + ": " + e.getMessage(), e);
        }
    }

    /** Probes ncclNetPlugin_v8, _v7, _v6, _v5 in that order and binds the first one found. */
    static NetPlugin bind(String libraryName, NativeLibrary lib) {
        List<String> probed = new ArrayList<>();
        for (NetPluginVersion v : NetPluginVersion.values()) {
            probed.add(v.symbol());
            Pointer t;
            try {
                t = lib.getGlobalVariableAddress(v.symbol());
            } catch (UnsatisfiedLinkError e) {
                continue;
            }
            return new NetPlugin(libraryName, lib, v, t);
        }
        throw new TransferException(TransferException.Code.NOT_SUPPORTED, libraryName
                + " exports none of the ncclNet tables this binding speaks (missing symbols "
                + String.join(", ", probed) + "); it is not an NCCL net plugin, or one of an unsupported ABI version");
    }

    String libraryName() {
        return libraryName;
    }

    NetPluginVersion version() {
        return version;
    }

    /** The plugin's own name (table member {@code name}), e.g. GPUDirectTCPX_v7. */
    String name() {
        return name;
    }

    /** The native table: one per loaded copy of the library (also read by tests that check slot order). */
    Pointer table() {
        return table;
    }

    NativeLibrary library() {
        return library;
    }

    boolean has(NetSlot slot) {
        return functions.containsKey(slot);
    }

    private Function fn(NetSlot slot) {
        Function f = functions.get(slot);
        if (f == null) {
            throw new TransferException(TransferException.Code.NOT_SUPPORTED, name + " has no " + slot);
        }
        return f;
    }

    // ---- the calls; each returns ncclResult_t ----

    /** The logger must stay reachable for the life of the process: the plugin keeps the pointer. */
    int init(PluginLogger logFunction) {
        this.logger = logFunction;
        return fn(NetSlot.INIT).invokeInt(new Object[] {logFunction.entryPoint()});
    }

    PluginLogger logger() {
        return logger;
    }

    int devices(Pointer ndev) {
        return fn(NetSlot.DEVICES).invokeInt(new Object[] {ndev});
    }

    int getProperties(int dev, Pointer props) {
        return fn(NetSlot.GET_PROPERTIES).invokeInt(new Object[] {dev, props});
    }

    int listen(int dev, Pointer handle, Pointer listenComm) {
        return fn(NetSlot.LISTEN).invokeInt(new Object[] {dev, handle, listenComm});
    }

    /** v7+: {@code sendDevHandle} points to a pointer slot (null inside: no offload asked; TCPX ignores it). */
    int connect(int dev, Pointer handle, Pointer sendComm, Pointer sendDevHandle) {
        Object[] args = version.deviceHandles()
                ? new Object[] {dev, handle, sendComm, sendDevHandle}
                : new Object[] {dev, handle, sendComm};
        return fn(NetSlot.CONNECT).invokeInt(args);
    }

    /** v7+: {@code recvDevHandle} points to a pointer slot that holds the address of a zeroed 32-byte buffer. */
    int accept(long listenComm, Pointer recvComm, Pointer recvDevHandle) {
        Object[] args = version.deviceHandles()
                ? new Object[] {listenComm, recvComm, recvDevHandle}
                : new Object[] {listenComm, recvComm};
        return fn(NetSlot.ACCEPT).invokeInt(args);
    }

    /** {@code mhandle} is the address of a pointer slot the plugin writes the memory handle to. */
    int regMr(long comm, long data, long size, int type, long mhandle) {
        Object sizeArg = version.regMrSizeT() ? (Object) size : (Object) Math.toIntExact(size);
        return fn(NetSlot.REG_MR).invokeInt(new Object[] {comm, data, sizeArg, type, mhandle});
    }

    int deregMr(long comm, long mhandle) {
        return fn(NetSlot.DEREG_MR).invokeInt(new Object[] {comm, mhandle});
    }

    /** {@code request} is the address of a pointer slot the plugin writes the request to. */
    int isend(long comm, long data, int size, int tag, long mhandle, long request) {
        if (callPath == CallPath.TRAMPOLINE) {
            return NetCallTrampolines.isend(isendFn, comm, data, size, tag, mhandle, request);
        }
        return fn(NetSlot.ISEND).invokeInt(new Object[] {comm, data, size, tag, mhandle, request});
    }

    /**
     * n == 1 only (TCPX rejects anything else): {@code data}, {@code sizes}, {@code tags} and
     * {@code mhandles} are addresses of one-element native arrays, {@code request} of a pointer slot.
     */
    int irecv(long comm, long data, long sizes, long tags, long mhandles, long request) {
        if (callPath == CallPath.TRAMPOLINE) {
            return NetCallTrampolines.irecv(irecvFn, comm, 1, data, sizes, tags, mhandles, request);
        }
        return fn(NetSlot.IRECV).invokeInt(new Object[] {comm, 1, data, sizes, tags, mhandles, request});
    }

    /** {@code done} and {@code size} are addresses of native ints. */
    int test(long request, long done, long size) {
        if (callPath == CallPath.TRAMPOLINE) {
            return NetCallTrampolines.test(testFn, request, done, size);
        }
        return fn(NetSlot.TEST).invokeInt(new Object[] {request, done, size});
    }

    /** v7+, and only when the entry is not null ({@link #has}). */
    int irecvConsumed(long comm, long request) {
        if (callPath == CallPath.TRAMPOLINE && irecvConsumedFn != 0) {
            return NetCallTrampolines.irecvConsumed(irecvConsumedFn, comm, 1, request);
        }
        return fn(NetSlot.IRECV_CONSUMED).invokeInt(new Object[] {comm, 1, request});
    }

    int closeSend(long comm) {
        return fn(NetSlot.CLOSE_SEND).invokeInt(new Object[] {comm});
    }

    int closeRecv(long comm) {
        return fn(NetSlot.CLOSE_RECV).invokeInt(new Object[] {comm});
    }

    int closeListen(long listenComm) {
        return fn(NetSlot.CLOSE_LISTEN).invokeInt(new Object[] {listenComm});
    }
}
