package io.tcpx4j.transport.loopback.arch;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The loopback transport's files keep their arrows one way: no two of them depend on each other,
 * directly or through others. What comms, listeners and connects need from their transport they get
 * from a {@code CommSupport} it lends them, not by calling back into {@code LoopbackTransport}.
 * Nested, anonymous and lambda classes count as part of the file that declares them.
 */
class LoopbackStructureTest {

    private static final String LOOPBACK = "io.tcpx4j.transport.loopback";

    /** One slice per top-level class of {@code pkg}; classes of other packages belong to none. */
    static SliceAssignment filesOf(String pkg) {
        return new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                if (!c.getPackageName().equals(pkg)) {
                    return SliceIdentifier.ignore();
                }
                JavaClass top = c;
                while (top.getEnclosingClass().isPresent()) {
                    top = top.getEnclosingClass().get();
                }
                return SliceIdentifier.of(top.getSimpleName());
            }

            @Override
            public String getDescription() {
                return "the files of " + pkg;
            }
        };
    }

    static ArchRule noCycleBetweenFilesOf(String pkg) {
        return slices().assignedFrom(filesOf(pkg)).should().beFreeOfCycles();
    }

    @Test
    void theTransportsFilesFormNoDependencyCycle() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(LOOPBACK);
        assertThat(classes.stream().map(JavaClass::getSimpleName))
                .as("classes the rule is checked against")
                .contains("LoopbackTransport", "Connector", "PendingConnect", "LoopbackListener", "LoopbackComm",
                        "LoopbackSendComm", "LoopbackRecvComm", "LoopbackRequest", "CommSupport");
        noCycleBetweenFilesOf(LOOPBACK).check(classes);
    }

    /** An owner and a collaborator that calls back into it: the shape the rule exists to refuse. */
    @Test
    void theRuleFailsOnAnOwnerCallback() {
        String pkg = Owner.class.getPackageName() + ".cycle";
        JavaClasses classes = new ClassFileImporter().importPackages(pkg);
        assertThat(classes.stream().map(JavaClass::getSimpleName)).contains("OwningTransport", "CallingBackComm");
        assertThatThrownBy(() -> noCycleBetweenFilesOf(pkg).check(classes))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("OwningTransport")
                .hasMessageContaining("CallingBackComm");
    }

    /** Anchors the fixture package's name. */
    private static final class Owner {
    }
}
