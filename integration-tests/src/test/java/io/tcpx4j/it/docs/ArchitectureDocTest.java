package io.tcpx4j.it.docs;

import io.tcpx4j.domain.protocol.ControlFrame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/ARCHITECTURE.md describes the code it lands with: every control frame type and refusal code with its
 * value, the protocol version and every package of the domain, all read from the code.
 */
class ArchitectureDocTest {

    private static final Path DOMAIN = Path.of("..", "domain", "src", "main", "java", "io", "tcpx4j", "domain");
    private static final String TABLES = """
            | type | frame |
            | --- | --- |
            | 1 | `HELLO` | dialer to acceptor |
            | 2 | `BYE` | graceful close |

            | wire | code |
            | --- | --- |
            | 0 | `NONE` | accepted |

            The protocol version is 7. Packages: `session`, `port.out`.
            """;

    private static ArchitectureDoc code() {
        return ArchitectureDoc.ofCode(DOMAIN);
    }

    private static String doc() throws IOException {
        return Files.readString(Path.of("..", "docs", "ARCHITECTURE.md"));
    }

    /** A small code model that {@link #TABLES} describes exactly. */
    private static ArchitectureDoc small() {
        Map<String, Integer> frames = new LinkedHashMap<>();
        frames.put("HELLO", 1);
        frames.put("BYE", 2);
        return new ArchitectureDoc(frames, 7, Map.of("NONE", 0), Set.of("session", "port.out"));
    }

    @Test
    void theDocNamesEveryFrameRefusalAndPackageOfTheCodeWithItsValue() throws IOException {
        ArchitectureDoc code = code();
        // what the reflection found: a byte constant for every frame record, and the rooms of the domain
        assertThat(code.frames()).hasSize(ControlFrame.class.getPermittedSubclasses().length)
                .containsEntry("WRITE_ACK", (int) ControlFrame.WRITE_ACK);
        assertThat(code.packages()).contains("session", "datapath", "protocol", "port.out").doesNotContain("port");

        assertThat(code.problems(doc())).isEmpty();
    }

    @Test
    void aDocThatDescribesTheCodeHasNoProblems() {
        assertThat(small().problems(TABLES)).isEmpty();
    }

    @Test
    void aFrameTheDocLeavesOutIsReported() throws IOException {
        assertThat(small().problems(TABLES.replace("| 2 | `BYE` | graceful close |\n", "")))
                .containsExactly("no row for frame type BYE (2)");

        // the real doc without its WRITE_ACK row
        String doc = doc();
        String row = doc.lines().filter(l -> l.startsWith("| 6 | `WRITE_ACK` |")).findFirst().orElseThrow();
        assertThat(code().problems(doc.replace(row + "\n", ""))).containsExactly("no row for frame type WRITE_ACK (6)");
    }

    @Test
    void aFrameTheCodeGainedIsReportedUntilTheDocHasItsRow() {
        ArchitectureDoc grown = small();
        grown.frames().put("READ_CANCEL", 18);

        assertThat(grown.problems(TABLES)).containsExactly("no row for frame type READ_CANCEL (18)");
        assertThat(grown.problems(TABLES.replace("| 2 | `BYE` |", "| 18 | `READ_CANCEL` | x |\n| 2 | `BYE` |")))
                .isEmpty();
    }

    @Test
    void aWrongTypeByteOrWireValueIsReported() {
        assertThat(small().problems(TABLES.replace("| 2 | `BYE` |", "| 12 | `BYE` |")))
                .containsExactly("frame type BYE is 2 in the code, [12] in the doc");
        assertThat(small().problems(TABLES.replace("| 0 | `NONE` |", "| 1 | `NONE` |")))
                .containsExactly("refusal code NONE is 0 in the code, [1] in the doc");
    }

    @Test
    void aRowForAFrameTheCodeNoLongerHasIsReported() {
        assertThat(small().problems(TABLES.replace("| 2 | `BYE` |", "| 2 | `BYE` |\n| 3 | `GOODBYE` | x |")))
                .containsExactly("a row for GOODBYE, which is neither a frame type nor a refusal code in the code");
    }

    @Test
    void anotherProtocolVersionOrNoneIsReported() throws IOException {
        assertThat(small().problems(TABLES.replace("protocol version is 7", "protocol version is 6")))
                .containsExactly("states protocol version 6, the code speaks 7");
        assertThat(small().problems(TABLES.replace("The protocol version is 7.", "")))
                .containsExactly("states no protocol version (the code speaks 7)");

        String doc = doc();
        int version = ControlFrame.PROTOCOL_VERSION;
        assertThat(doc).contains("protocol version " + version);
        assertThat(code().problems(doc.replace("protocol version " + version, "protocol version " + (version + 1))))
                .containsExactly("states protocol version " + (version + 1) + ", the code speaks " + version);
    }

    @Test
    void aDomainPackageTheDocDoesNotNameIsReported() throws IOException {
        assertThat(small().problems(TABLES.replace("`port.out`", "port.out")))
                .containsExactly("does not name the domain package `port.out`");
        assertThat(code().problems(doc().replace("`idle`", "idle")))
                .containsExactly("does not name the domain package `idle`");
    }

    @Test
    void packagesAreTheDirectoriesThatHoldJavaFiles(@TempDir Path dir) throws IOException {
        Files.createDirectories(dir.resolve("port/out"));
        Files.createDirectories(dir.resolve("empty"));
        Files.writeString(dir.resolve("Engine.java"), "");
        Files.writeString(dir.resolve("port/out/NetTransport.java"), "");

        assertThat(ArchitectureDoc.packagesUnder(dir)).containsExactly("port.out");
    }
}
