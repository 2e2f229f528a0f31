package io.tcpx4j.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON document of a {@code doctor} run, one for every kind of check: what was checked, readiness, the checks. */
final class DoctorJson {

    private DoctorJson() {
    }

    /**
     * Prints the tool, its version, {@code subject}'s entries in their order, whether nothing blocks, how
     * many checks block and the checks; returns the exit code (1 if any check blocks).
     */
    static int print(Io io, Map<String, Object> subject, List<Check> checks) throws IOException {
        long blocking = checks.stream().filter(Check::blocks).count();
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("tool", "tcpx4j doctor");
        doc.put("version", Main.version());
        doc.putAll(subject);
        doc.put("ready", blocking == 0);
        doc.put("blocking", blocking);
        doc.put("checks", checks);
        io.out().println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(doc));
        io.out().flush();
        return blocking > 0 ? 1 : 0;
    }
}
