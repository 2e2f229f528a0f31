package io.tcpx4j.transport.tcpx;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The libc calls the binding needs: the environment ({@link System#getenv} is the JVM's snapshot
 * taken at start; the plugin reads the process environment with getenv(3), so settings for it go
 * through setenv(3)), and dladdr(3), which names the file a loaded library came from.
 */
final class LibC {

    private static final NativeLibrary C = NativeLibrary.getInstance("c");

    private LibC() {
    }

    /** getenv(3): the process's current value, or null. */
    static String getenv(String name) {
        Pointer p = (Pointer) C.getFunction("getenv").invoke(Pointer.class, new Object[] {name});
        return p == null ? null : p.getString(0);
    }

    /** The whole process environment (libc's {@code environ}), which setenv(3) calls since start-up changed. */
    static Map<String, String> environment() {
        Map<String, String> env = new LinkedHashMap<>();
        Pointer environ = C.getGlobalVariableAddress("environ").getPointer(0);
        if (environ == null) {
            return env;
        }
        for (String entry : environ.getStringArray(0)) {
            int eq = entry.indexOf('=');
            if (eq > 0) {
                env.put(entry.substring(0, eq), entry.substring(eq + 1));
            }
        }
        return env;
    }

    /** setenv(3) with overwrite = 1. */
    static void setenv(String name, String value) {
        if (C.getFunction("setenv").invokeInt(new Object[] {name, value, 1}) != 0) {
            throw new IllegalStateException("setenv " + name + " failed");
        }
    }

    /** unsetenv(3). */
    static void unsetenv(String name) {
        C.getFunction("unsetenv").invokeInt(new Object[] {name});
    }

    /**
     * The path of the loaded object that holds {@code address} (dladdr(3)'s {@code dli_fname}), or null
     * when no loaded object holds it.
     */
    static String objectFileOf(Pointer address) {
        Function dladdr;
        try {
            dladdr = C.getFunction("dladdr");
        } catch (UnsatisfiedLinkError e) {
            dladdr = NativeLibrary.getInstance("dl").getFunction("dladdr"); // before glibc 2.34
        }
        Memory info = new Memory(4L * Native.POINTER_SIZE); // Dl_info: dli_fname first
        info.clear();
        if (dladdr.invokeInt(new Object[] {address, info}) == 0) {
            return null;
        }
        Pointer name = info.getPointer(0);
        return name == null ? null : name.getString(0);
    }

    /** setenv(3) with overwrite = 0: an existing value wins. Returns whether the value is now set. */
    static boolean setenvIfAbsent(String name, String value) {
        Function f = C.getFunction("setenv");
        return f.invokeInt(new Object[] {name, value, 0}) == 0;
    }
}
