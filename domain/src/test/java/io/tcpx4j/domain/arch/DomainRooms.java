package io.tcpx4j.domain.arch;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaFieldAccess;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The rooms of the engine core and the walls between them, as ArchUnit rules over a root package: the
 * engine's ({@code io.tcpx4j.domain}) in {@link DomainRoomsTest}, small fixtures in the test that shows
 * each rule fails where it should.
 *
 * <p>The layers, top to bottom; a layer may use the layers below it and never one above or beside it:
 * <ol>
 *   <li>{@code lifecycle}: one engine's start, warm-up and stop, and the provider the api's factory finds;</li>
 *   <li>{@code Engine} (the root package: the composition root that applications hold) beside
 *       {@code warmup} (private engines that compile the transfer paths at start-up, through the API);</li>
 *   <li>{@code session}: what an application posts, validated and pinned on its thread;</li>
 *   <li>{@code agent}: the progress agent, its command queue and its driver;</li>
 *   <li>{@code peer}: the peers, their connections and the handshake;</li>
 *   <li>{@code control} (the control sockets) beside {@code datapath} (the transfers of one connection
 *       and their chunks on the data channels);</li>
 *   <li>{@code transfer}: one posted transfer, its post and packing;</li>
 *   <li>{@code registration}: registered memory and its transport registrations;</li>
 *   <li>{@code idle} (how a driver waits) beside {@code log};</li>
 *   <li>the configuration ({@code EngineConfig} in the root package);</li>
 *   <li>{@code protocol}, then {@code memory}, then the SPI {@code port.out}.</li>
 * </ol>
 */
final class DomainRooms {

    /** Layer names, top to bottom; names on one row stand beside each other and may not use each other. */
    static final List<List<String>> LAYERS = List.of(
            List.of("lifecycle"),
            List.of("Engine", "warmup"),
            List.of("session"),
            List.of("agent"),
            List.of("peer"),
            List.of("control", "datapath"),
            List.of("transfer"),
            List.of("registration"),
            List.of("idle", "log"),
            List.of("Configuration"),
            List.of("protocol"),
            List.of("memory"),
            List.of("port.out"));

    private DomainRooms() {
    }

    /** No two sub-packages of {@code root} depend on each other, directly or through others. */
    static ArchRule noCyclesBetweenRooms(String root) {
        return slices().matching(root + ".(*)..").should().beFreeOfCycles()
                .because("a room's walls are its package; a cycle between two rooms makes them one");
    }

    /** Every class of {@code root} lies in a layer, and each layer uses only layers below it. */
    static ArchRule layersPointDown(String root) {
        Pattern configName = Pattern.compile(Pattern.quote(root) + "\\.EngineConfig(\\$.*)?");
        // arrays of the configuration type count as that type
        DescribedPredicate<JavaClass> config = DescribedPredicate.describe("the configuration",
                c -> configName.matcher(c.getBaseComponentType().getName()).matches());
        LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers();
        for (List<String> row : LAYERS) {
            for (String name : row) {
                layers = switch (name) {
                    case "Engine" -> layers.layer(name).definedBy(
                            resideInAPackage(root).and(not(config)).as("the root package"));
                    case "Configuration" -> layers.layer(name).definedBy(config);
                    default -> layers.layer(name).definedBy(root + "." + name + "..");
                };
            }
        }
        for (int i = 0; i < LAYERS.size(); i++) {
            List<String> below = new ArrayList<>();
            for (List<String> row : LAYERS.subList(i + 1, LAYERS.size())) {
                below.addAll(row);
            }
            for (String name : LAYERS.get(i)) {
                layers = below.isEmpty() ? layers.whereLayer(name).mayNotAccessAnyLayer()
                        : layers.whereLayer(name).mayOnlyAccessLayers(below.toArray(String[]::new));
            }
        }
        return layers.withOptionalLayers(true).ensureAllClassesAreContainedInArchitecture()
                .because("arrows point down: a room reports upwards through an interface it declares");
    }

    /**
     * A field is written only by the file that declares it (nested classes count as part of their file):
     * the state of a transfer, a peer or a channel changes through its owner's methods.
     */
    static ArchRule fieldsWrittenOnlyByTheirOwner(String root) {
        return classes().that().resideInAPackage(root + "..")
                .should(new ArchCondition<>("write only fields declared in their own file") {
                    @Override
                    public void check(JavaClass c, ConditionEvents events) {
                        for (JavaFieldAccess a : c.getFieldAccessesFromSelf()) {
                            if (a.getAccessType() == JavaFieldAccess.AccessType.SET
                                    && !file(a.getTargetOwner()).equals(file(c))) {
                                events.add(SimpleConditionEvent.violated(a, describe(a)));
                            }
                        }
                    }
                })
                .because("one place owns the state of one thing");
    }

    private static String file(JavaClass c) {
        String name = c.getName();
        int nested = name.indexOf('$');
        return nested < 0 ? name : name.substring(0, nested);
    }

    private static String describe(JavaAccess<?> a) {
        return a.getDescription();
    }
}
