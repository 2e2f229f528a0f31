package io.tcpx4j.api;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte sizes as users type them in options and backend parameters: {@code 4096}, {@code 4K},
 * {@code 1M}, {@code 2G}, also {@code 4KiB}, {@code 4kb} (binary units: K = 1024, any case). Whitespace,
 * fractions, signs and unknown suffixes are refused.
 */
public final class ByteSize {

    private static final Pattern SIZE = Pattern.compile("(\\d{1,19})([kmgt]?)(i?b)?");

    private ByteSize() {
    }

    /**
     * Parses a size of at least 1 byte.
     *
     * @throws IllegalArgumentException with a message fit for the user
     */
    public static long parse(String text) {
        long v = parseOrZero(text);
        if (v == 0) {
            throw new IllegalArgumentException("size '" + text + "' must be at least 1 byte");
        }
        return v;
    }

    /**
     * Parses a size that may be 0 (a limit that turns something off).
     *
     * @throws IllegalArgumentException with a message fit for the user
     */
    public static long parseOrZero(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("empty size");
        }
        Matcher m = SIZE.matcher(text.toLowerCase(Locale.ROOT));
        if (!m.matches() || (m.group(3) != null && m.group(3).startsWith("i") && m.group(2).isEmpty())) {
            throw new IllegalArgumentException("'" + text + "' is not a size (examples: 4096, 4K, 1M, 2G)");
        }
        long value;
        try {
            value = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        int shift = switch (m.group(2)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        if (value > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        return value << shift;
    }

    /** The shortest exact form: 4K, 64M, 1G, or plain bytes when not a whole multiple. */
    public static String format(long bytes) {
        String[] units = {"T", "G", "M", "K"};
        int[] shifts = {40, 30, 20, 10};
        for (int i = 0; i < units.length; i++) {
            long unit = 1L << shifts[i];
            if (bytes >= unit && bytes % unit == 0) {
                return (bytes >> shifts[i]) + units[i];
            }
        }
        return Long.toString(bytes);
    }
}
