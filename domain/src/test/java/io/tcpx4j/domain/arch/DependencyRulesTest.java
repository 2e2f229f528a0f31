package io.tcpx4j.domain.arch;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dependency rule of docs/ARCHITECTURE.md section 1 as a test: {@code api} and {@code domain} never see
 * Guice, JNA, JCuda or jackson-databind. The Maven enforcer bans the artifacts; this catches what a
 * ban cannot: a shaded or transitively smuggled copy of one of those packages that a class names by
 * type.
 *
 * <p>api classes are on domain's test classpath, so one import covers both modules. Test classes of
 * domain are imported too: the test doubles there are meant to be reused by adapter modules and
 * must not drag those libraries in either.
 */
@AnalyzeClasses(packages = {"io.tcpx4j.api", "io.tcpx4j.domain"})
class DependencyRulesTest {

    @ArchTest
    static final ArchRule apiAndDomainStayFreeOfAdapterLibraries = noClasses()
            .that().resideInAnyPackage("io.tcpx4j.api..", "io.tcpx4j.domain..")
            .should().dependOnClassesThat().resideInAnyPackage(
                    "com.google.inject..", "com.sun.jna..", "jcuda..", "com.fasterxml.jackson.databind..")
            .because("docs/ARCHITECTURE.md section 1: adapters own Guice, JNA, JCuda and jackson-databind; "
                    + "api and domain must load without them");

    /**
     * Guards the rule above against passing vacuously: if the scan found no api classes (a classpath
     * change), the rule would still hold for domain alone and nobody would notice.
     */
    @ArchTest
    static void importsBothModules(JavaClasses classes) {
        assertThat(classes.contain("io.tcpx4j.api.TransferEngine")).as("api classes imported").isTrue();
        assertThat(classes.contain("io.tcpx4j.domain.port.out.NetTransport")).as("domain classes imported").isTrue();
    }
}
