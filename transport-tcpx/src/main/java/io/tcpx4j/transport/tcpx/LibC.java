package io.tcpx4j.transport.tcpx;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The two libc calls the binding needs. {@link System#getenv} is the JVM's snapshot taken at start;
 * the plugin reads the process environment with getenv(3), so settings for it go through setenv(3).
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

    /** setenv(3) with overwrite = 0: an existing value wins. Returns whether the value is now set. */
    static boolean setenvIfAbsent(String name, String value) {
        Function f = C.getFunction("setenv");
        return f.invokeInt(new Object[] {name, value, 0}) == 0;
    }
}
