package io.tcpx4j.it.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Finds what does not belong in a code comment: measured figures, host (machine) names and commit ids.
 * They go stale with the next measurement; docs/PERFORMANCE.md and the commit log hold them. A comment
 * states the fact or reason a figure supports instead.
 *
 * <p>Figures are told from facts by their shape: a range, a decimal or an approximation with a unit of
 * time or throughput ({@code 23–28 µs}, {@code 2.9 GB/s}, {@code ~20 us}), a percentage, a comparison
 * ({@code 2.2× the}, {@code 30% faster}). A plain configured value ({@code 50 µs}, {@code 4 KiB},
 * {@code 32 x 4 KiB}) is a fact and passes.
 */
final class CommentFacts {

    /** One comment line that breaks a rule. */
    record Finding(String rule, int line, String text) {
        @Override
        public String toString() {
            return line + ": " + rule + ": " + text.strip();
        }
    }

    private static final String NUM = "\\d+(?:[.,]\\d+)?";
    private static final String UNIT =
            "(?:ns|µs|us|ms|s|sec|seconds|GB/s|GiB/s|MB/s|MiB/s|Gb/s|Gbit/s|Gbps)(?![\\p{L}\\p{N}/])";

    private static final Map<String, Pattern> RULES = Map.of(
            "measured range", Pattern.compile(NUM + "\\s*(?:–|-|to)\\s*" + NUM + "\\s*(?:" + UNIT + "|×|%)"),
            "measured decimal", Pattern.compile("\\d+\\.\\d+\\s*(?:" + UNIT + "|×)"),
            "approximate figure", Pattern.compile("(?i)(?:~|\\babout |\\baround |\\broughly |\\bnearly )\\s*"
                    + NUM + "\\s*" + UNIT),
            "percentage", Pattern.compile("\\d\\s*%"),
            "comparison", Pattern.compile("(?i)(?:" + NUM + "\\s*[×x]\\s+(?:the|more|less|fewer|as)\\b)"
                    + "|(?:(?:\\d\\s*[×x%]|\\bx|×|\\btimes)\\s+(?:faster|slower)\\b)"),
            "commit id", Pattern.compile("(?<![\\p{L}\\p{N}_#])(?<!0x)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])"
                    + "[0-9a-f]{7,40}(?![\\p{L}\\p{N}_])"),
            "host name", Pattern.compile(
                    "(?i)\\b(?:[ahb]100|h200|gb200|nvidia-h\\d+\\S*|\\d+-(?:core|cpu) (?:box|host|vm))\\b"),
            "date of a run", Pattern.compile("\\b20\\d\\d-[01]\\d-[0-3]\\d\\b"));

    private CommentFacts() {
    }

    /** The findings in the comments of one Java, C, C++ or CUDA source. */
    static List<Finding> find(String source) {
        List<Finding> findings = new ArrayList<>();
        for (Comments.Line c : Comments.of(source)) {
            for (Map.Entry<String, Pattern> rule : new java.util.TreeMap<>(RULES).entrySet()) {
                if (rule.getValue().matcher(c.text()).find()) {
                    findings.add(new Finding(rule.getKey(), c.line(), c.text()));
                }
            }
        }
        return findings;
    }
}
