package io.tcpx4j.domain.arch;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine core (package {@code io.tcpx4j.domain}) keeps its arrows one way: no two of its files
 * depend on each other, directly or through others. Collaborators report upwards through narrow
 * interfaces ({@code ConnectionEvents}, {@code LocalRegion.Owner}) instead of holding their owner.
 * Nested, anonymous and lambda classes count as part of the file that declares them.
 */
class DomainCoreStructureTest {

    private static final String CORE = "io.tcpx4j.domain";

    @Test
    void theCoreFilesFormNoDependencyCycle() {
        Map<String, Set<String>> graph = coreFileGraph();
        assertThat(graph).as("core files analysed").containsKeys("Engine", "Connection", "DataPath", "PeerDirectory")
                .hasSizeGreaterThan(15);
        assertThat(cycles(graph)).as("dependency cycles between core files").isEmpty();
    }

    @Test
    void theCheckFindsACycleWhenThereIsOne() {
        Map<String, Set<String>> graph = new TreeMap<>();
        graph.put("A", Set.of("B"));
        graph.put("B", Set.of("C"));
        graph.put("C", Set.of("A"));
        graph.put("D", Set.of("A"));
        assertThat(cycles(graph)).containsExactly(List.of("A", "B", "C"));
    }

    /** Top-level file name -> the core files it depends on (itself excluded). */
    private static Map<String, Set<String>> coreFileGraph() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(CORE);
        Map<String, Set<String>> graph = new TreeMap<>();
        for (JavaClass c : classes) {
            if (!c.getPackageName().equals(CORE)) {
                continue;
            }
            String from = file(c);
            Set<String> to = graph.computeIfAbsent(from, k -> new TreeSet<>());
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass().getBaseComponentType();
                if (target.getPackageName().equals(CORE) && !file(target).equals(from)) {
                    to.add(file(target));
                }
            }
        }
        return graph;
    }

    private static String file(JavaClass c) {
        String simple = c.getName().substring(CORE.length() + 1);
        int nested = simple.indexOf('$');
        return nested < 0 ? simple : simple.substring(0, nested);
    }

    /** Strongly connected components with more than one file (Tarjan), each sorted. */
    static List<List<String>> cycles(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        List<String> stack = new ArrayList<>();
        Set<String> onStack = new HashSet<>();
        List<List<String>> out = new ArrayList<>();
        int[] counter = {0};
        for (String v : graph.keySet()) {
            if (!index.containsKey(v)) {
                strongConnect(v, graph, index, low, stack, onStack, out, counter);
            }
        }
        return out;
    }

    private static void strongConnect(String v, Map<String, Set<String>> graph, Map<String, Integer> index,
                                      Map<String, Integer> low, List<String> stack, Set<String> onStack,
                                      List<List<String>> out, int[] counter) {
        index.put(v, counter[0]);
        low.put(v, counter[0]);
        counter[0]++;
        stack.add(v);
        onStack.add(v);
        for (String w : graph.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                strongConnect(w, graph, index, low, stack, onStack, out, counter);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            List<String> component = new ArrayList<>();
            String w;
            do {
                w = stack.remove(stack.size() - 1);
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) {
                component.sort(null);
                out.add(component);
            }
        }
    }
}
