package io.tcpx4j.metrics;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Test helper: a parser of Prometheus' text exposition format (0.0.4): {@code # TYPE} lines and samples
 * {@code name{label="value",...} number}. Rejects what the format does not allow (a sample without a
 * value, an unquoted label value, a bad escape, a number that does not parse, a sample of a family whose
 * TYPE came after it), so that a test reading it checks the format too.
 */
public final class PrometheusText {

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public boolean has(String label, String value) {
            return value.equals(labels.get(label));
        }
    }

    private final List<Sample> samples;
    private final Map<String, String> types;

    private PrometheusText(List<Sample> samples, Map<String, String> types) {
        this.samples = Collections.unmodifiableList(samples);
        this.types = Collections.unmodifiableMap(types);
    }

    public List<Sample> samples() {
        return samples;
    }

    /** The family's type from its {@code # TYPE} line (counter, gauge, histogram, summary, untyped), or null. */
    public String type(String family) {
        return types.get(family);
    }

    /** Samples named {@code name} whose labels include every pair of {@code labels} (name, value, ...). */
    public List<Sample> find(String name, String... labels) {
        Predicate<Sample> p = s -> s.name().equals(name);
        for (int i = 0; i + 1 < labels.length; i += 2) {
            String k = labels[i];
            String v = labels[i + 1];
            p = p.and(s -> s.has(k, v));
        }
        return samples.stream().filter(p).toList();
    }

    /** The sum of {@link #find}'s values. */
    public double sum(String name, String... labels) {
        return find(name, labels).stream().mapToDouble(Sample::value).sum();
    }

    /**
     * The {@code q} quantile of histogram {@code family} (its {@code _bucket} samples with {@code labels}), as
     * Prometheus' {@code histogram_quantile} computes it: linear within the bucket the rank falls into.
     */
    public double histogramQuantile(double q, String family, String... labels) {
        List<double[]> buckets = buckets(family, labels);
        double total = buckets.get(buckets.size() - 1)[1];
        if (total == 0) {
            return Double.NaN;
        }
        double rank = q * total;
        double lowerBound = 0;
        double lowerCount = 0;
        for (double[] b : buckets) {
            if (b[1] >= rank) {
                if (Double.isInfinite(b[0])) {
                    return lowerBound;
                }
                return lowerBound + (b[0] - lowerBound) * (rank - lowerCount) / (b[1] - lowerCount);
            }
            lowerBound = b[0];
            lowerCount = b[1];
        }
        throw new IllegalStateException("no +Inf bucket in " + family);
    }

    /** The smallest bucket bound of histogram {@code family} at or above {@code value}. */
    public double upperBound(String family, double value, String... labels) {
        return buckets(family, labels).stream().mapToDouble(b -> b[0]).filter(le -> le >= value).min()
                .orElseThrow();
    }

    /** (le, cumulative count) of the histogram's buckets, by le; they must be cumulative and end at +Inf. */
    private List<double[]> buckets(String family, String... labels) {
        List<double[]> buckets = new ArrayList<>();
        for (Sample s : find(family + "_bucket", labels)) {
            String le = s.labels().get("le");
            buckets.add(new double[] {le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le), s.value()});
        }
        buckets.sort((x, y) -> Double.compare(x[0], y[0]));
        if (buckets.isEmpty() || !Double.isInfinite(buckets.get(buckets.size() - 1)[0])) {
            throw new IllegalArgumentException("no +Inf bucket in " + family);
        }
        for (int i = 1; i < buckets.size(); i++) {
            if (buckets.get(i)[1] < buckets.get(i - 1)[1]) {
                throw new IllegalArgumentException(family + " buckets are not cumulative at le=" + buckets.get(i)[0]);
            }
        }
        return buckets;
    }

    public static PrometheusText parse(String text) {
        List<Sample> samples = new ArrayList<>();
        Map<String, String> types = new HashMap<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        int lineNo = 0;
        for (String line : text.split("\n", -1)) {
            lineNo++;
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("#")) {
                String[] parts = line.split(" ", 4);
                if (parts.length >= 4 && parts[1].equals("TYPE")) {
                    if (seen.contains(parts[2])) {
                        throw new IllegalArgumentException("line " + lineNo + ": TYPE after samples of " + parts[2]);
                    }
                    if (!List.of("counter", "gauge", "histogram", "summary", "untyped").contains(parts[3])) {
                        throw new IllegalArgumentException("line " + lineNo + ": unknown type " + parts[3]);
                    }
                    types.put(parts[2], parts[3]);
                }
                continue;
            }
            Sample s = sample(line, lineNo);
            samples.add(s);
            seen.add(s.name());
            seen.add(family(s.name()));
        }
        return new PrometheusText(samples, types);
    }

    /** A sample's family: its name without the suffixes a histogram, summary or counter adds. */
    static String family(String name) {
        for (String suffix : List.of("_bucket", "_count", "_sum", "_total", "_created")) {
            if (name.endsWith(suffix)) {
                return name.substring(0, name.length() - suffix.length());
            }
        }
        return name;
    }

    private static Sample sample(String line, int lineNo) {
        int i = 0;
        while (i < line.length() && isNameChar(line.charAt(i), i == 0)) {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException("line " + lineNo + ": no metric name: " + line);
        }
        String name = line.substring(0, i);
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (true) {
                if (i < line.length() && line.charAt(i) == '}') {
                    i++;
                    break;
                }
                int start = i;
                while (i < line.length() && isNameChar(line.charAt(i), i == start)) {
                    i++;
                }
                if (i == start || i + 1 >= line.length() || line.charAt(i) != '=' || line.charAt(i + 1) != '"') {
                    throw new IllegalArgumentException("line " + lineNo + ": bad label at " + start + ": " + line);
                }
                String key = line.substring(start, i);
                i += 2;
                StringBuilder value = new StringBuilder();
                while (true) {
                    if (i >= line.length()) {
                        throw new IllegalArgumentException("line " + lineNo + ": unterminated label value: " + line);
                    }
                    char c = line.charAt(i++);
                    if (c == '"') {
                        break;
                    }
                    if (c == '\\') {
                        char e = i < line.length() ? line.charAt(i++) : 0;
                        switch (e) {
                            case '\\' -> value.append('\\');
                            case '"' -> value.append('"');
                            case 'n' -> value.append('\n');
                            default -> throw new IllegalArgumentException("line " + lineNo + ": bad escape: " + line);
                        }
                    } else {
                        value.append(c);
                    }
                }
                if (labels.put(key, value.toString()) != null) {
                    throw new IllegalArgumentException("line " + lineNo + ": label " + key + " twice: " + line);
                }
                if (i < line.length() && line.charAt(i) == ',') {
                    i++;
                }
            }
        }
        if (i >= line.length() || line.charAt(i) != ' ') {
            throw new IllegalArgumentException("line " + lineNo + ": no value: " + line);
        }
        String[] rest = line.substring(i + 1).trim().split(" ");
        if (rest.length > 2) {
            throw new IllegalArgumentException("line " + lineNo + ": trailing text: " + line);
        }
        return new Sample(name, labels, number(rest[0], lineNo));
    }

    private static double number(String s, int lineNo) {
        switch (s) {
            case "+Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            case "NaN":
                return Double.NaN;
            default:
                try {
                    return Double.parseDouble(s);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("line " + lineNo + ": not a number: " + s);
                }
        }
    }

    private static boolean isNameChar(char c, boolean first) {
        return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
    }

    /** Scrapes {@code url} with a plain HTTP GET and parses the body. */
    public static PrometheusText scrape(String url) throws java.io.IOException, InterruptedException {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new java.io.IOException("GET " + url + ": HTTP " + r.statusCode());
        }
        String type = r.headers().firstValue("Content-Type").orElse("");
        if (!type.startsWith("text/plain")) {
            throw new java.io.IOException("GET " + url + ": Content-Type " + type);
        }
        return parse(r.body());
    }
}
