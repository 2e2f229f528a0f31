package io.tcpx4j.it.docs;

import io.tcpx4j.domain.protocol.ControlFrame;
import io.tcpx4j.domain.protocol.RefusalCode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What docs/ARCHITECTURE.md must state about the code, and what is wrong with a text of it: every control
 * frame type with its type byte, every refusal code with its wire value (as table rows
 * {@code | value | `NAME` |}), the protocol version, and every sub-package of the domain.
 *
 * @param frames          frame name to type byte, as {@link ControlFrame} declares them
 * @param protocolVersion {@link ControlFrame#PROTOCOL_VERSION}
 * @param refusals        refusal name to wire value, as {@link RefusalCode} declares them
 * @param packages        the domain's sub-packages relative to {@code io.tcpx4j.domain}, e.g. {@code port.out}
 */
record ArchitectureDoc(Map<String, Integer> frames, int protocolVersion, Map<String, Integer> refusals,
                       Set<String> packages) {

    /** A table row whose first cell is a number and whose second is a name in backticks. */
    private static final Pattern ROW = Pattern.compile("(?m)^\\|\\s*(-?\\d+)\\s*\\|\\s*`([A-Z][A-Z_]*)`\\s*\\|");
    /** "protocol version 7", "protocol version is 7", "PROTOCOL_VERSION` = 7" and the like. */
    private static final Pattern VERSION = Pattern.compile("(?i)protocol[ _]version\\W{0,5}(?:is\\W{1,3})?(\\d+)");

    /** What the code says: frames and refusal codes by reflection, packages from the domain's source tree. */
    static ArchitectureDoc ofCode(Path domainSources) {
        Map<String, Integer> frames = new LinkedHashMap<>();
        for (Field f : ControlFrame.class.getFields()) {
            if (f.getType() == byte.class && Modifier.isStatic(f.getModifiers())) {
                try {
                    frames.put(f.getName(), (int) f.getByte(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        Map<String, Integer> refusals = new LinkedHashMap<>();
        for (RefusalCode r : RefusalCode.values()) {
            refusals.put(r.name(), r.wire());
        }
        return new ArchitectureDoc(frames, ControlFrame.PROTOCOL_VERSION, refusals, packagesUnder(domainSources));
    }

    /** The packages below {@code root} (a source directory of one package) that hold Java files. */
    static Set<String> packagesUnder(Path root) {
        Set<String> out = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(p -> p.toString().endsWith(".java")).map(Path::getParent).filter(d -> !d.equals(root))
                    .forEach(d -> out.add(root.relativize(d).toString().replace(d.getFileSystem().getSeparator(), ".")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** Everything {@code doc} misses or states otherwise than the code; empty when it agrees. */
    List<String> problems(String doc) {
        List<String> problems = new ArrayList<>();
        Map<String, List<Integer>> rows = new LinkedHashMap<>();
        Matcher m = ROW.matcher(doc);
        while (m.find()) {
            rows.computeIfAbsent(m.group(2), k -> new ArrayList<>()).add(Integer.parseInt(m.group(1)));
        }
        checkRows("frame type", frames, rows, problems);
        checkRows("refusal code", refusals, rows, problems);
        for (String name : rows.keySet()) {
            if (!frames.containsKey(name) && !refusals.containsKey(name)) {
                problems.add("a row for " + name + ", which is neither a frame type nor a refusal code in the code");
            }
        }
        Matcher v = VERSION.matcher(doc);
        boolean stated = false;
        while (v.find()) {
            stated = true;
            if (Integer.parseInt(v.group(1)) != protocolVersion) {
                problems.add("states protocol version " + v.group(1) + ", the code speaks " + protocolVersion);
            }
        }
        if (!stated) {
            problems.add("states no protocol version (the code speaks " + protocolVersion + ")");
        }
        for (String p : packages) {
            if (!doc.contains("`" + p + "`")) {
                problems.add("does not name the domain package `" + p + "`");
            }
        }
        return problems;
    }

    private static void checkRows(String what, Map<String, Integer> code, Map<String, List<Integer>> rows,
                                  List<String> problems) {
        code.forEach((name, value) -> {
            List<Integer> stated = rows.get(name);
            if (stated == null) {
                problems.add("no row for " + what + " " + name + " (" + value + ")");
            } else if (stated.stream().anyMatch(s -> s.intValue() != value)) {
                problems.add(what + " " + name + " is " + value + " in the code, " + stated + " in the doc");
            }
        });
    }
}
