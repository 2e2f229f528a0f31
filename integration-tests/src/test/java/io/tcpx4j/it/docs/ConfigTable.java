package io.tcpx4j.it.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rows of the tables in README.md's "Configuration" section, and what is wrong with them: a row longer
 * than {@link #MAX_WORDS} words, or one that links to no section of docs/CONFIG.md that exists.
 *
 * @param rows the table rows of the section, header and separator lines left out
 */
record ConfigTable(List<String> rows) {

    /** A row holds a knob's default and meaning; details belong in docs/CONFIG.md. */
    static final int MAX_WORDS = 40;

    private static final Pattern LINK_TARGET = Pattern.compile("\\]\\(([^)]*)\\)");
    private static final Pattern CONFIG_LINK = Pattern.compile("\\]\\(docs/CONFIG\\.md#([a-z0-9-]+)\\)");
    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}]");

    /** The tables of the {@code ## Configuration} section of a README. */
    static ConfigTable of(String readme) {
        int from = readme.indexOf("\n## Configuration\n");
        if (from < 0) {
            throw new IllegalArgumentException("no '## Configuration' section");
        }
        int to = readme.indexOf("\n## ", from + 1);
        String section = readme.substring(from, to < 0 ? readme.length() : to);
        List<String> rows = new ArrayList<>();
        boolean header = false;
        for (String line : section.split("\\R")) {
            String t = line.strip();
            if (!t.startsWith("|")) {
                header = false;
                continue;
            }
            if (!header) {
                header = true; // the first line of a table names its columns
                continue;
            }
            if (!t.matches("\\|[-:| ]+\\|")) {
                rows.add(t);
            }
        }
        return new ConfigTable(List.copyOf(rows));
    }

    /** Words of a row: whitespace-separated tokens with a letter or digit, link targets left out. */
    static int words(String row) {
        String text = LINK_TARGET.matcher(row).replaceAll("]").replace('|', ' ');
        int n = 0;
        for (String token : text.trim().split("\\s+")) {
            if (WORD.matcher(token).find()) {
                n++;
            }
        }
        return n;
    }

    /** One message per problem, given the heading anchors of docs/CONFIG.md. */
    List<String> problems(Set<String> configAnchors) {
        List<String> problems = new ArrayList<>();
        for (String row : rows) {
            int n = words(row);
            if (n > MAX_WORDS) {
                problems.add(n + " words (at most " + MAX_WORDS + "; details go to docs/CONFIG.md): " + row);
            }
            Matcher link = CONFIG_LINK.matcher(row);
            if (!link.find()) {
                problems.add("no link to a section of docs/CONFIG.md: " + row);
            } else if (!configAnchors.contains(link.group(1))) {
                problems.add("docs/CONFIG.md has no section #" + link.group(1) + ": " + row);
            }
        }
        return problems;
    }

    /** GitHub's anchors of a markdown file's headings: lower case, punctuation dropped, spaces as dashes. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new java.util.HashSet<>();
        for (String line : markdown.split("\\R")) {
            Matcher h = Pattern.compile("^#{1,6} (.+)$").matcher(line);
            if (h.matches()) {
                anchors.add(h.group(1).strip().toLowerCase(java.util.Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
            }
        }
        return anchors;
    }
}
