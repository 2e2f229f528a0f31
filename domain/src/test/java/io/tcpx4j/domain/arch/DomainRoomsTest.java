package io.tcpx4j.domain.arch;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine core keeps to its rooms ({@link DomainRooms}): no cycle between its packages, each layer
 * uses only the layers below it, and a field is written only by the file that declares it. Each rule is
 * also run on a fixture that breaks it ({@code fixture.*}), and must fail there.
 */
class DomainRoomsTest {

    private static final String DOMAIN = "io.tcpx4j.domain";
    private static final String FIXTURE = "io.tcpx4j.domain.arch.fixture";

    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(DOMAIN);

    @Test
    void everyRoomIsImported() {
        // guards the rules below against passing vacuously (a package renamed out of every layer)
        for (List<String> row : DomainRooms.LAYERS) {
            for (String room : row) {
                String pkg = switch (room) {
                    case "Engine", "Configuration" -> DOMAIN;
                    default -> DOMAIN + "." + room;
                };
                assertThat(CORE.stream().anyMatch(c -> c.getPackageName().equals(pkg))).as(room).isTrue();
            }
        }
        assertThat(CORE.contain(DOMAIN + ".Engine")).isTrue();
        assertThat(CORE.contain(DOMAIN + ".EngineConfig")).isTrue();
    }

    @Test
    void theRoomsFormNoCycle() {
        DomainRooms.noCyclesBetweenRooms(DOMAIN).check(CORE);
    }

    @Test
    void eachLayerUsesOnlyTheLayersBelowIt() {
        DomainRooms.layersPointDown(DOMAIN).check(CORE);
    }

    @Test
    void fieldsAreWrittenOnlyByTheirOwner() {
        DomainRooms.fieldsWrittenOnlyByTheirOwner(DOMAIN).check(CORE);
    }

    @Test
    void theCycleRuleFindsACycle() {
        String root = FIXTURE + ".cycle";
        EvaluationResult r = DomainRooms.noCyclesBetweenRooms(root).evaluate(fixture(root));
        assertThat(r.hasViolation()).isTrue();
        assertThat(r.getFailureReport().toString()).contains("peer", "datapath");
    }

    @Test
    void theLayerRuleFindsAnArrowUpwards() {
        String root = FIXTURE + ".upward";
        EvaluationResult r = DomainRooms.layersPointDown(root).evaluate(fixture(root));
        assertThat(r.hasViolation()).isTrue();
        assertThat(r.getFailureReport().toString())
                .contains("registration.Region").contains("session.Poster").contains("upward.Engine")
                .doesNotContain("upward.EngineConfig>");
    }

    @Test
    void theLayerRuleFindsAnArrowSideways() {
        String root = FIXTURE + ".sideways";
        EvaluationResult r = DomainRooms.layersPointDown(root).evaluate(fixture(root));
        assertThat(r.hasViolation()).isTrue();
        assertThat(r.getFailureReport().toString()).contains("control.Stream").contains("datapath.Chunks");
    }

    @Test
    void theLayerRuleAcceptsArrowsDownwards() {
        String root = FIXTURE + ".downward";
        assertThat(DomainRooms.layersPointDown(root).evaluate(fixture(root)).hasViolation()).isFalse();
        assertThat(DomainRooms.noCyclesBetweenRooms(root).evaluate(fixture(root)).hasViolation()).isFalse();
        assertThat(DomainRooms.fieldsWrittenOnlyByTheirOwner(root).evaluate(fixture(root)).hasViolation()).isFalse();
    }

    @Test
    void theFieldRuleFindsAFieldWrittenFromAnotherFile() {
        String root = FIXTURE + ".fields";
        EvaluationResult r = DomainRooms.fieldsWrittenOnlyByTheirOwner(root).evaluate(fixture(root));
        assertThat(r.hasViolation()).isTrue();
        assertThat(r.getFailureReport().getDetails()).hasSize(1).first().asString()
                .contains("Meddler").contains("Owner.count");
    }

    private static JavaClasses fixture(String root) {
        JavaClasses classes = new ClassFileImporter().importPackages(root);
        assertThat(classes).as("fixture classes of " + root).isNotEmpty();
        return classes;
    }
}
