package io.tcpx4j.transport.tcpx;

import com.sun.jna.Native;

import java.io.File;
import java.io.IOException;

/**
 * The per-chunk ncclNet calls through this module's JNI library ({@code src/main/native/netcall.c},
 * built by the Maven build into the jar): each native method takes the plugin's function pointer and
 * the call's arguments as primitives, so a call allocates nothing and skips JNA's argument array,
 * boxing and libffi frame. Pointers are passed as {@code long} (the binding runs on LP64 only).
 *
 * <p>Without the library (a build without gcc or without the JDK's {@code jni.h}, or a library of
 * another {@link #ABI}) {@link #isAvailable} is false and {@link NetPlugin} makes the same calls
 * through JNA's generic {@code Function.invoke}.
 *
 * <p>Thread-safe (stateless).
 */
final class NetCallTrampolines {

    static final String RESOURCE = "/io/tcpx4j/transport/tcpx/native/libtcpx4j-netcall.so";
    /** NETCALL_ABI of netcall.c this class was written against. */
    static final int ABI = 1;

    private static final Throwable UNAVAILABLE = load();

    private NetCallTrampolines() {
    }

    static boolean isAvailable() {
        return UNAVAILABLE == null;
    }

    /** Why the library is not available, or null. */
    static Throwable unavailabilityCause() {
        return UNAVAILABLE;
    }

    private static Throwable load() {
        Throwable cause;
        try {
            File f = Native.extractFromResourcePath(RESOURCE, NetCallTrampolines.class.getClassLoader());
            // System.load binds the JNI methods of the classes of this class's loader
            System.load(f.getAbsolutePath());
            int abi = abi();
            if (abi == ABI) {
                return null;
            }
            cause = new UnsatisfiedLinkError(RESOURCE + " has trampoline ABI " + abi + ", this binding needs " + ABI);
        } catch (IOException | UnsatisfiedLinkError | RuntimeException e) {
            cause = e;
        }
        System.getLogger(NetCallTrampolines.class.getName()).log(System.Logger.Level.INFO,
                "net-call trampolines unavailable, calling the plugin through JNA's generic invoke"
                        + " (slower, allocates per call): {0}", cause.toString());
        return cause;
    }

    static native int abi();

    /** {@code int isend(void* sendComm, void* data, int size, int tag, void* mhandle, void** request)}. */
    static native int isend(long fn, long sendComm, long data, int size, int tag, long mhandle, long requestOut);

    /** {@code int irecv(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles, void** request)}. */
    static native int irecv(long fn, long recvComm, int n, long data, long sizes, long tags, long mhandles,
                            long requestOut);

    /** {@code int test(void* request, int* done, int* sizes)}. */
    static native int test(long fn, long request, long doneOut, long sizesOut);

    /** {@code int irecvConsumed(void* recvComm, int n, void* request)}. */
    static native int irecvConsumed(long fn, long recvComm, int n, long request);
}
