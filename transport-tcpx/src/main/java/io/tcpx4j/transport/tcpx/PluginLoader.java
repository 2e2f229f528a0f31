package io.tcpx4j.transport.tcpx;

import com.sun.jna.Native;
import io.tcpx4j.api.TransferException;
import io.tcpx4j.domain.memory.NativeMemory;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Finds, probes, loads and initialises the net plugin, once per library file per process (the plugin
 * keeps global state and NCCL calls init once too), and never a second copy of a loaded library from
 * another path ({@link LoadedPlugins}: TCPX aborts the process when a second copy loads).
 *
 * <p>Order: discovery ({@link LibraryLocator}); for a path, the file-identity checks (another name for
 * a loaded file is served by its plugin; a copy of an opened library is refused, after the child probe
 * when one is asked for); dlopen of the first candidate that exists (candidates that do not exist or
 * do not open are collected as suppressed errors); symbol probing; then, if asked, init in a child JVM
 * ({@link TcpxProbeMain}) so that a plugin calling exit(1) in init ends the child, not us; then init in
 * this JVM. The first error is thrown, with the later ones suppressed.
 *
 * <p>Thread-safe.
 */
final class PluginLoader {

    static final String CHUNK_ENV = "NCCL_DYNAMIC_CHUNK_SIZE";
    private static final System.Logger LOG = System.getLogger(PluginLoader.class.getName());
    /** The libraries this process opened, by file (see {@link LoadedPlugins}). */
    private static final LoadedPlugins LIBRARIES = new LoadedPlugins();

    private PluginLoader() {
    }

    /** The initialised plugin for these options. Throws a TransferException that tells the user what to fix. */
    static synchronized NetPlugin load(TcpxOptions options) {
        return load(options, LIBRARIES);
    }

    /** As {@link #load(TcpxOptions)}, keeping to one copy of each library among {@code libraries}. */
    static synchronized NetPlugin load(TcpxOptions options, LoadedPlugins libraries) {
        List<LibraryLocator.Candidate> candidates = LibraryLocator.candidates(options.library());
        applyChunkSizeDefault(options.dynamicChunkSize());
        List<TransferException> misses = new ArrayList<>();
        for (LibraryLocator.Candidate c : candidates) {
            NetPlugin cached = libraries.byName(c.name());
            if (cached != null) {
                return cached;
            }
            if (!LibraryLocator.worthTrying(c)) {
                misses.add(new TransferException(TransferException.Code.NOT_SUPPORTED, "no file " + c));
                continue;
            }
            if (!c.loaderName()) {
                NetPlugin same = libraries.initialisedFrom(Path.of(c.name()));
                if (same != null) {
                    return libraries.remember(c.name(), same); // another name for a loaded file: no second init
                }
                Path first = libraries.copied(Path.of(c.name()));
                if (first != null) {
                    // refused before it is opened: a second copy of TCPX aborts the process as it loads.
                    // A requested probe still runs first, so that a library whose init fails says so.
                    TransferException e = LoadedPlugins.secondCopy(c.name(), first);
                    try {
                        if (options.probeInChildProcess()) {
                            probeInChild(c.name(), options);
                        }
                    } catch (TransferException probe) {
                        e = probe;
                    }
                    misses.forEach(e::addSuppressed);
                    throw e;
                }
            }
            com.sun.jna.NativeLibrary lib;
            try {
                lib = NetPlugin.load(c.name());
            } catch (TransferException e) {
                misses.add(e);
                continue;
            }
            // This is the library: from here on its errors are the answer.
            try {
                NetPlugin plugin = NetPlugin.bind(c.name(), lib);
                NetPlugin same = libraries.sameObject(plugin);
                if (same != null) {
                    return libraries.remember(c.name(), same); // the loader's name for a loaded file
                }
                libraries.opened(plugin);
                if (options.probeInChildProcess()) {
                    probeInChild(c.name(), options);
                }
                int rc = plugin.init(new PluginLogger());
                if (rc != NcclResult.SUCCESS) {
                    throw new TransferException(TransferException.Code.BACKEND, c + ": " + plugin.name()
                            + " init returned " + NcclResult.name(rc) + "; its log (System.Logger "
                            + PluginLogger.LOGGER_NAME + ") says why");
                }
                libraries.initialised(plugin);
                return libraries.remember(c.name(), plugin);
            } catch (TransferException e) {
                misses.forEach(e::addSuppressed);
                throw e;
            }
        }
        StringBuilder tried = new StringBuilder();
        for (LibraryLocator.Candidate c : candidates) {
            tried.append(tried.length() == 0 ? "" : ", ").append(c);
        }
        TransferException e = new TransferException(TransferException.Code.NOT_SUPPORTED,
                "no TCPX net plugin found; tried " + tried + ". To fix: " + LibraryLocator.hint(),
                misses.isEmpty() ? null : misses.get(0));
        for (int i = 1; i < misses.size(); i++) {
            e.addSuppressed(misses.get(i));
        }
        throw e;
    }

    /**
     * Sets NCCL_DYNAMIC_CHUNK_SIZE in the process environment when it is unset: TCPX reads it once in
     * init, and with it unset (0) transfers hang. Done before any init, never overriding a user value.
     */
    static void applyChunkSizeDefault(long value) {
        if (value <= 0) {
            return;
        }
        String set = LibC.getenv(CHUNK_ENV);
        if (set != null) {
            if (!set.trim().equals(Long.toString(value))) {
                LOG.log(System.Logger.Level.INFO, "{0}={1} from the environment is kept; the engine''s chunks are {2}"
                        + " bytes, so the plugin schedules each chunk in pieces of that size", CHUNK_ENV, set,
                        Long.toString(value));
            }
            return;
        }
        if (LibC.setenvIfAbsent(CHUNK_ENV, Long.toString(value))) {
            // the value as a string: a number argument would be formatted for the locale (524,288)
            LOG.log(System.Logger.Level.INFO, "{0} was unset; set it to {1} for the net plugin", CHUNK_ENV,
                    Long.toString(value));
        }
    }

    /** Runs {@link TcpxProbeMain} in a child JVM; returns normally only if init and devices succeeded there. */
    static void probeInChild(String library, TcpxOptions options) {
        Path out = null;
        Path err = null;
        try {
            out = Files.createTempFile("tcpx4j-probe", ".out");
            err = Files.createTempFile("tcpx4j-probe", ".err");
            List<String> cmd = new ArrayList<>();
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.add("-Xshare:auto");
            cmd.add("-XX:TieredStopAtLevel=1");
            cmd.add("-XX:+UseSerialGC");
            cmd.add("-Xmx64m");
            for (String key : System.getProperties().stringPropertyNames()) {
                if (key.startsWith("jna.")) {
                    cmd.add("-D" + key + "=" + System.getProperty(key));
                }
            }
            cmd.add("-cp");
            cmd.add(childClasspath());
            cmd.add(TcpxProbeMain.class.getName());
            cmd.add(library);
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
            // ProcessBuilder starts from the JVM's start-up snapshot; the plugin in this process will see
            // libc's current environment (NCCL_DYNAMIC_CHUNK_SIZE set above, anything set natively), so the
            // child gets exactly that.
            pb.environment().clear();
            pb.environment().putAll(LibC.environment());
            Process p = pb.start();
            if (!p.waitFor(options.probeTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                throw new TransferException(TransferException.Code.BACKEND, library + ": the init probe did not finish within "
                        + options.probeTimeout() + "; plugin log: " + tail(err));
            }
            int status = p.exitValue();
            String line = resultLine(out);
            if (status == 0 && line != null && line.startsWith("OK ")) {
                return;
            }
            if (line != null && line.startsWith("FAIL ")) {
                throw new TransferException(TransferException.Code.BACKEND, library + ": " + line.substring(5)
                        + "; plugin log: " + tail(err));
            }
            throw new TransferException(TransferException.Code.BACKEND, library
                    + ": " + Tcpx.INIT_ENDED_PROCESS + " (exit status " + status + ") instead of returning."
                    + " TCPX calls exit(1) when the CUDA driver cannot initialise: check that the NVIDIA driver is"
                    + " loaded (nvidia-smi works), libcuda.so.1 is on the loader path and CUDA_VISIBLE_DEVICES names"
                    + " a GPU. Plugin log: " + tail(err));
        } catch (IOException e) {
            throw new TransferException(TransferException.Code.BACKEND,
                    "cannot run the TCPX init probe in a child JVM: " + e.getMessage()
                            + " (TcpxOptions.probeInChildProcess=false skips it, at the risk of exit(1) in init)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransferException(TransferException.Code.CANCELED, "interrupted during the TCPX init probe", e);
        } finally {
            delete(out);
            delete(err);
        }
    }

    private static String resultLine(Path out) throws IOException {
        for (String l : Files.readAllLines(out, StandardCharsets.UTF_8)) {
            if (l.startsWith(TcpxProbeMain.PREFIX)) {
                return l.substring(TcpxProbeMain.PREFIX.length());
            }
        }
        return null;
    }

    private static String tail(Path file) {
        try {
            String s = Files.readString(file, StandardCharsets.UTF_8).strip().replace('\n', ' ');
            if (s.isEmpty()) {
                return "(empty)";
            }
            return s.length() <= 2000 ? s : "..." + s.substring(s.length() - 2000);
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    private static void delete(Path p) {
        if (p != null) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // a temp file left behind is harmless
            }
        }
    }

    /** This module's classes, JNA, api and domain, then whatever the parent's class path has. */
    static String childClasspath() {
        Set<String> parts = new LinkedHashSet<>();
        for (Class<?> c : List.of(PluginLoader.class, Native.class, TransferException.class, NativeMemory.class)) {
            try {
                var src = c.getProtectionDomain().getCodeSource();
                if (src != null) {
                    parts.add(Path.of(src.getLocation().toURI()).toString());
                }
            } catch (URISyntaxException | SecurityException | IllegalArgumentException ignored) {
                // fall back to java.class.path below
            }
        }
        for (String p : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
            if (!p.isEmpty()) {
                parts.add(p);
            }
        }
        return String.join(File.pathSeparator, parts);
    }
}
