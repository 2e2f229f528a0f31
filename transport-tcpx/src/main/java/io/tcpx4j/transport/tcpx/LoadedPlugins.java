package io.tcpx4j.transport.tcpx;

import io.tcpx4j.api.TransferException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The net plugin libraries this process opened, by file identity, so that it holds one copy of each.
 * TCPX cannot be loaded twice: a second copy of the library, opened from another path, registers its
 * protobuf descriptors a second time and libprotobuf aborts the process while the library loads. The
 * dynamic loader maps one file once however it is named (a symlink, a hard link, a relative path) but
 * maps a copy again, so:
 * <ul>
 *   <li>another name for a file whose plugin is initialised is served by that plugin
 *       ({@link #initialisedFrom}), without a second init;</li>
 *   <li>a file whose bytes are those of an opened library, at another path, is refused before it is
 *       opened ({@link #copied}, {@link #secondCopy}), naming both paths;</li>
 *   <li>a name for the dynamic loader cannot be checked before it is opened; when the loader hands back
 *       an object already opened, its initialised plugin serves ({@link #sameObject}).</li>
 * </ul>
 * Libraries with other bytes are other plugins (or other builds of one) and are opened.
 *
 * <p>Thread-safe: every method is synchronized.
 */
final class LoadedPlugins {

    /** An opened library: its file, the file's identity (device and inode), its plugin once initialised. */
    private static final class Opened {
        final Path file;
        final Object fileKey;
        final NetPlugin plugin;
        boolean initialised;

        Opened(Path file, Object fileKey, NetPlugin plugin) {
            this.file = file;
            this.fileKey = fileKey;
            this.plugin = plugin;
        }
    }

    private final List<Opened> opened = new ArrayList<>();
    /** Initialised plugins by every name they were asked for. */
    private final Map<String, NetPlugin> byName = new HashMap<>();

    /** The initialised plugin asked for by exactly this name before, or null. */
    synchronized NetPlugin byName(String name) {
        return byName.get(name);
    }

    /** Serves {@code name} with {@code plugin} from now on; returns the plugin. */
    synchronized NetPlugin remember(String name, NetPlugin plugin) {
        byName.put(name, plugin);
        return plugin;
    }

    /** The initialised plugin loaded from the file at {@code path}, under whatever name, or null. */
    synchronized NetPlugin initialisedFrom(Path path) {
        Object key = fileKey(path);
        for (Opened o : opened) {
            if (o.initialised && key != null && key.equals(o.fileKey)) {
                return o.plugin;
            }
        }
        return null;
    }

    /** The file of an opened library that {@code path} is a copy of (same bytes, another file), or null. */
    synchronized Path copied(Path path) {
        Object key = fileKey(path);
        for (Opened o : opened) {
            if (o.fileKey != null && !o.fileKey.equals(key) && sameBytes(o.file, path)) {
                return o.file;
            }
        }
        return null;
    }

    /** The initialised plugin whose table is {@code plugin}'s (the loader's same object), or null. */
    synchronized NetPlugin sameObject(NetPlugin plugin) {
        for (Opened o : opened) {
            if (o.initialised && o.plugin.table().equals(plugin.table())) {
                return o.plugin;
            }
        }
        return null;
    }

    /** Records a library the loader has opened, with the file it came from. */
    synchronized void opened(NetPlugin plugin) {
        for (Opened o : opened) {
            if (o.plugin.table().equals(plugin.table())) {
                return;
            }
        }
        Path file = fileOf(plugin);
        opened.add(new Opened(file, file == null ? null : fileKey(file), plugin));
    }

    /** Records that {@code plugin}'s init succeeded: from now on it serves every name of its file. */
    synchronized void initialised(NetPlugin plugin) {
        opened(plugin);
        for (Opened o : opened) {
            if (o.plugin.table().equals(plugin.table())) {
                o.initialised = true;
            }
        }
    }

    /** The error for a copy of an opened library, naming both paths. */
    static TransferException secondCopy(String copy, Path first) {
        return new TransferException(TransferException.Code.INVALID_PARAM, copy + " is a copy of the net plugin"
                + " library " + first + ", which this process has already loaded; a process holds one copy of a net"
                + " plugin (a second copy of TCPX aborts the process while it loads): use " + first
                + " for every transport of this process");
    }

    private static Path fileOf(NetPlugin plugin) {
        String f = LibC.objectFileOf(plugin.table());
        if (f == null || f.isEmpty()) {
            f = plugin.libraryName();
        }
        Path p = Path.of(f);
        return Files.isRegularFile(p) ? p.toAbsolutePath() : null;
    }

    private static Object fileKey(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    private static boolean sameBytes(Path a, Path b) {
        try {
            return Files.size(a) == Files.size(b) && Files.mismatch(a, b) == -1;
        } catch (IOException e) {
            return false; // unreadable: the loader's own error will say why
        }
    }
}
