package io.tcpx4j.transport.tcpx;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * Where to look for the net plugin, in order:
 * <ol>
 *   <li>an explicit path: system property {@value #PROPERTY}, else environment variable {@value #ENV}
 *       (when one is set, nothing else is tried: the user said which library);</li>
 *   <li>NCCL's own naming: {@code NCCL_NET_PLUGIN=foo} means {@code libnccl-net-foo.so} (a value that
 *       contains a '/' or ends in ".so" is taken as a file name as is), then {@code libnccl-net.so};
 *       both resolved by the dynamic loader (LD_LIBRARY_PATH, ld.so.cache);</li>
 *   <li>the paths the A3 images install TCPX to: {@value #A3_TCPX}, {@value #A3_VAR}.</li>
 * </ol>
 * Loader names are tried by dlopen itself; file paths are skipped when the file does not exist.
 */
final class LibraryLocator {

    static final String PROPERTY = "tcpx4j.tcpx.library";
    static final String ENV = "TCPX4J_NET_PLUGIN";
    static final String NCCL_ENV = "NCCL_NET_PLUGIN";
    static final String A3_TCPX = "/usr/local/tcpx/lib64/libnccl-net-tcpx.so";
    static final String A3_VAR = "/var/lib/tcpx/lib64/libnccl-net.so";

    /** One place to try: a file path or a name for the dynamic loader. */
    record Candidate(String name, boolean loaderName, String origin) {
        @Override
        public String toString() {
            return name + " (" + origin + ")";
        }
    }

    private LibraryLocator() {
    }

    /** The candidates for an explicit path (may be null), an environment and a file-exists test. */
    static List<Candidate> candidates(String explicitPath, UnaryOperator<String> properties,
                                      UnaryOperator<String> environment) {
        List<Candidate> out = new ArrayList<>();
        if (explicitPath != null && !explicitPath.isBlank()) {
            out.add(new Candidate(explicitPath, false, "TcpxOptions.library"));
            return out;
        }
        String prop = properties.apply(PROPERTY);
        if (prop != null && !prop.isBlank()) {
            out.add(new Candidate(prop, false, "system property " + PROPERTY));
            return out;
        }
        String env = environment.apply(ENV);
        if (env != null && !env.isBlank()) {
            out.add(new Candidate(env, false, "environment " + ENV));
            return out;
        }
        String nccl = environment.apply(NCCL_ENV);
        if (nccl != null && !nccl.isBlank() && !nccl.equals("none")) {
            if (nccl.contains("/") || nccl.endsWith(".so")) {
                out.add(new Candidate(nccl, !nccl.contains("/"), "environment " + NCCL_ENV));
            } else {
                out.add(new Candidate("libnccl-net-" + nccl + ".so", true, "environment " + NCCL_ENV + "=" + nccl));
            }
        }
        out.add(new Candidate("libnccl-net.so", true, "dynamic loader path"));
        out.add(new Candidate(A3_TCPX, false, "A3 default"));
        out.add(new Candidate(A3_VAR, false, "A3 default"));
        return out;
    }

    static List<Candidate> candidates(String explicitPath) {
        return candidates(explicitPath, System::getProperty, System::getenv);
    }

    /** Whether a candidate is worth a dlopen: loader names always, paths only when the file exists. */
    static boolean worthTrying(Candidate c, Predicate<Path> exists) {
        return c.loaderName() || exists.test(Path.of(c.name()));
    }

    static boolean worthTrying(Candidate c) {
        return worthTrying(c, Files::isRegularFile);
    }

    /** The hint every "not found" message ends with. */
    static String hint() {
        return "set system property " + PROPERTY + " or environment variable " + ENV
                + " to the plugin's path (on A3: " + A3_TCPX + "), or NCCL_NET_PLUGIN / LD_LIBRARY_PATH as for NCCL";
    }
}
