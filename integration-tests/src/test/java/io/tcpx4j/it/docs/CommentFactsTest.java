package io.tcpx4j.it.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No measured figures, host names or commit ids in the comments of any module's main sources (Java, C,
 * C++, CUDA): they go stale with the next measurement, and docs/PERFORMANCE.md and the commit log hold
 * them.
 */
class CommentFactsTest {

    private static final Path ROOT = Path.of("..");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Set<String> SOURCES = Set.of("java", "c", "h", "cpp", "hpp", "cu");

    @Test
    void mainSourceCommentsHoldNoFiguresHostNamesOrCommitIds() {
        assertThat(scan()).as("state the fact or reason instead (figures: docs/PERFORMANCE.md)").isEmpty();
    }

    @Test
    void theScanReachesEveryModulesMainSources() {
        List<String> modules = modules();
        assertThat(modules).contains("domain", "nixl-backend", "cuda-unpack", "cli");
        for (String module : modules) {
            if (Files.isDirectory(ROOT.resolve(module).resolve("src/main"))) {
                assertThat(sources(module)).as(module).isNotEmpty();
            }
        }
        assertThat(sources("nixl-backend")).anyMatch(p -> p.toString().endsWith(".cpp"));
        assertThat(sources("cuda-unpack")).anyMatch(p -> p.toString().endsWith(".cu"));
    }

    @Test
    void plantedFiguresHostNamesAndCommitIdsAreFound() {
        assertThat(rules("/** 32 KiB transfers take 23–28 µs inline against 41-47 chunked. */"))
                .contains("measured range");
        assertThat(rules("// moved 2.9 GB/s, 1.5× the bytes")).contains("measured decimal");
        assertThat(rules("// a staging copy takes ~20 us")).contains("approximate figure");
        assertThat(rules("/* about 100 ms per socket */")).contains("approximate figure");
        assertThat(rules("// spent 56 % of its CPU")).contains("percentage");
        assertThat(rules("//  is 30% faster")).contains("percentage", "comparison");
        assertThat(rules("// 2× the bytes per second")).contains("comparison");
        assertThat(rules("// up to a third slower (commit d20ce0d)")).containsExactly("commit id");
        assertThat(rules("// no faster: commits 1e8a636, 5fbc415")).containsExactly("commit id");
        assertThat(rules("// on the H200")).containsExactly("host name");
        assertThat(rules("// on the 2-core box")).containsExactly("host name");
        assertThat(rules("// a 16-CPU host")).containsExactly("host name");
        assertThat(rules("// nvidia-h100-x1, 2026-11-27")).contains("host name", "date of a run");
    }

    @Test
    void factsAndCodeAreLeftAlone() {
        assertThat(CommentFacts.find("""
                /** TCPX holds at most 2048 4-KiB pages per receive; 32 x 4 KiB = 128 KiB per call. */
                // spins 50 µs, then blocks at most 100 ms; masks 0x7fffffff and 0xdeadbeef1
                // 16-byte loads per lane, 1..64 channels, NCCL 2.18, 12.5e9 bytes per second
                String s = "about 20 us, 30% faster, commit d20ce0d, H200";
                char q = '"'; String t = "// not a comment";
                long big = 1'000'000; // C++ digit separators
                const char *usage = R"(--spin 2.5 ms on the H200)";
                """)).isEmpty();
    }

    @Test
    void findingsNameTheirLine() {
        assertThat(CommentFacts.find("class A {\n  String s = \"x\";\n  /**\n   * took 1.3 ms\n   */\n}\n"))
                .singleElement().satisfies(f -> assertThat(f.line()).isEqualTo(4));
    }

    private static List<String> rules(String source) {
        return CommentFacts.find(source).stream().map(CommentFacts.Finding::rule).toList();
    }

    /** Findings per file (path relative to the repository root, '/'-separated). */
    private static Map<String, List<CommentFacts.Finding>> scan() {
        Map<String, List<CommentFacts.Finding>> found = new TreeMap<>();
        for (String module : modules()) {
            for (Path p : sources(module)) {
                try {
                    List<CommentFacts.Finding> f = CommentFacts.find(Files.readString(p));
                    if (!f.isEmpty()) {
                        found.put(ROOT.relativize(p).toString().replace('\\', '/'), f);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return found;
    }

    private static List<String> modules() {
        try {
            Matcher m = MODULE.matcher(Files.readString(ROOT.resolve("pom.xml")));
            List<String> modules = new ArrayList<>();
            while (m.find()) {
                modules.add(m.group(1).strip());
            }
            return modules;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Path> sources(String module) {
        Path main = ROOT.resolve(module).resolve("src/main");
        if (!Files.isDirectory(main)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(main)) {
            return files.filter(Files::isRegularFile).filter(p -> {
                String name = p.getFileName().toString();
                int dot = name.lastIndexOf('.');
                return dot > 0 && SOURCES.contains(name.substring(dot + 1));
            }).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
