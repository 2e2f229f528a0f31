package io.tcpx4j.it.docs;

import java.util.ArrayList;
import java.util.List;

/**
 * The comments of a Java, C, C++ or CUDA source, line by line: {@code //} and {@code /* ... *}{@code /}
 * comments, with string, text-block, character and C++ raw-string literals skipped so that their
 * contents never count as comments.
 */
final class Comments {

    /** One line of a comment and its 1-based line number in the source. */
    record Line(int line, String text) {
    }

    private Comments() {
    }

    static List<Line> of(String s) {
        List<Line> out = new ArrayList<>();
        int line = 1;
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (s.startsWith("//", i)) {
                int end = s.indexOf('\n', i);
                end = end < 0 ? n : end;
                out.add(new Line(line, s.substring(i, end)));
                i = end;
            } else if (s.startsWith("/*", i)) {
                int end = s.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                String[] lines = s.substring(i, end).split("\n", -1);
                for (int k = 0; k < lines.length; k++) {
                    out.add(new Line(line + k, lines[k]));
                }
                line += lines.length - 1;
                i = end;
            } else if (s.startsWith("\"\"\"", i)) {
                int end = s.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
                line += count(s, i, end);
                i = end;
            } else if (c == 'R' && s.startsWith("R\"", i) && (i == 0 || !Character.isLetterOrDigit(s.charAt(i - 1)))) {
                int open = s.indexOf('(', i);
                String close = ")" + s.substring(i + 2, open) + "\"";
                int end = s.indexOf(close, open);
                end = end < 0 ? n : end + close.length();
                line += count(s, i, end);
                i = end;
            } else if (c == '"' || (c == '\'' && (i == 0 || !Character.isLetterOrDigit(s.charAt(i - 1))))) {
                int j = i + 1;
                while (j < n && s.charAt(j) != c && s.charAt(j) != '\n') {
                    j += s.charAt(j) == '\\' ? 2 : 1;
                }
                i = j < n && s.charAt(j) == c ? j + 1 : j; // an unterminated literal ends at its line
            } else {
                if (c == '\n') {
                    line++;
                }
                i++;
            }
        }
        return out;
    }

    private static int count(String s, int from, int to) {
        int k = 0;
        for (int i = from; i < to; i++) {
            if (s.charAt(i) == '\n') {
                k++;
            }
        }
        return k;
    }
}
