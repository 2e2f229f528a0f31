package io.tcpx4j.it.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** README.md's configuration table: one short line per knob, each linked to its details in docs/CONFIG.md. */
class ConfigTableTest {

    private static final String HEAD = "# x\n\n## Configuration\n\n| knob | default | meaning |\n| --- | --- | --- |\n";

    @Test
    void everyRowOfTheReadmesConfigurationTableIsShortAndLinksToItsDetails() throws IOException {
        ConfigTable table = ConfigTable.of(Files.readString(Path.of("..", "README.md")));
        Set<String> anchors = ConfigTable.anchors(Files.readString(Path.of("..", "docs", "CONFIG.md")));

        assertThat(table.rows()).as("EngineConfig's knobs, one row each").hasSizeGreaterThanOrEqualTo(15);
        assertThat(table.problems(anchors)).isEmpty();
    }

    @Test
    void aRowOfFortyOneWordsIsReportedAndOneOfFortyIsNot() {
        String link = " ([more](docs/CONFIG.md#timeouts)) |\n";
        // `k`, 1 and s are three words, the link "([more](...))" is one, and the rest repeats "word"
        String forty = "| `k` | 1 s | " + "word ".repeat(36) + link;
        String fortyOne = "| `k` | 1 s | " + "word ".repeat(37) + link;
        assertThat(ConfigTable.words(forty)).isEqualTo(40);

        assertThat(ConfigTable.of(HEAD + forty).problems(Set.of("timeouts"))).isEmpty();
        assertThat(ConfigTable.of(HEAD + fortyOne).problems(Set.of("timeouts")))
                .singleElement().asString().startsWith("41 words");
    }

    @Test
    void aRowWithoutAWorkingLinkToDocsConfigIsReported() {
        String unlinked = "| `k` | 1 s | a short meaning |\n";
        String dangling = "| `k` | 1 s | a short meaning ([more](docs/CONFIG.md#no-such-section)) |\n";

        assertThat(ConfigTable.of(HEAD + unlinked).problems(Set.of("timeouts")))
                .singleElement().asString().startsWith("no link");
        assertThat(ConfigTable.of(HEAD + dangling).problems(Set.of("timeouts")))
                .singleElement().asString().contains("no section #no-such-section");
    }

    @Test
    void headingsBecomeGithubAnchors() {
        assertThat(ConfigTable.anchors("# Configuration details\n## Channels, chunks and windows\n### Control TLS\n"))
                .containsExactlyInAnyOrder("configuration-details", "channels-chunks-and-windows", "control-tls");
    }
}
