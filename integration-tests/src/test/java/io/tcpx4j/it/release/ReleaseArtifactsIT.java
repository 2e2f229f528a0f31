package io.tcpx4j.it.release;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a Maven Central release of this build needs, checked on the artifacts the build just made:
 * every module's jar names its JPMS module and has sources and javadoc jars beside it, the BOM
 * lists every published module and carries the release metadata itself (it has no parent), and the
 * LICENSE is at the root. The pom metadata of the other modules is enforced by the enforcer's
 * release-metadata execution. Runs after every module is packaged (this module depends on all).
 */
class ReleaseArtifactsIT {

    private static final Pattern MODULE_NAME = Pattern.compile("io\\.tcpx4j(\\.[a-z][a-z0-9]*)+");
    /** Built and tested here, never published. */
    private static final String UNPUBLISHED = "integration-tests";

    private static Path root;
    private static String version;
    private static Document rootPom;

    @BeforeAll
    static void build() throws Exception {
        String r = System.getProperty("tcpx4j.root");
        version = System.getProperty("tcpx4j.version");
        assertThat(r).as("system property tcpx4j.root (set by the failsafe configuration)").isNotBlank();
        root = Path.of(r).toAbsolutePath().normalize();
        rootPom = xml(root.resolve("pom.xml"));
    }

    private static Document xml(Path p) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        return f.newDocumentBuilder().parse(p.toFile());
    }

    private static List<String> texts(Element parent, String path) {
        List<String> out = new ArrayList<>();
        collect(parent, path.split("/"), 0, out);
        return out;
    }

    private static void collect(Element e, String[] names, int i, List<String> out) {
        NodeList children = e.getChildNodes();
        for (int k = 0; k < children.getLength(); k++) {
            Node n = children.item(k);
            if (n instanceof Element c && c.getTagName().equals(names[i])) {
                if (i == names.length - 1) {
                    out.add(c.getTextContent().strip());
                } else {
                    collect(c, names, i + 1, out);
                }
            }
        }
    }

    private static List<String> modules() {
        return texts(rootPom.getDocumentElement(), "modules/module");
    }

    @Test
    void everyJarNamesItsModuleAndHasSourcesAndJavadocBesideIt() throws Exception {
        List<String> jarModules = new ArrayList<>();
        for (String m : modules()) {
            Document pom = xml(root.resolve(m).resolve("pom.xml"));
            List<String> packaging = texts(pom.getDocumentElement(), "packaging");
            if (!packaging.isEmpty() && !packaging.get(0).equals("jar")) {
                continue;
            }
            jarModules.add(m);
            String artifact = texts(pom.getDocumentElement(), "artifactId").get(0);
            Path target = root.resolve(m).resolve("target");
            Path jar = target.resolve(artifact + "-" + version + ".jar");
            assertThat(jar).as("the jar of %s (run ./mvnw -B verify from the root)", m).isRegularFile();
            try (JarFile j = new JarFile(jar.toFile())) {
                String name = j.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
                assertThat(name).as("Automatic-Module-Name of %s", jar.getFileName()).isNotNull().matches(MODULE_NAME);
            }
            if (m.equals(UNPUBLISHED)) {
                continue;
            }
            assertThat(target.resolve(artifact + "-" + version + "-sources.jar")).as("sources jar of %s", m).isRegularFile();
            assertThat(target.resolve(artifact + "-" + version + "-javadoc.jar")).as("javadoc jar of %s", m).isRegularFile();
            try (JarFile j = new JarFile(target.resolve(artifact + "-" + version + "-javadoc.jar").toFile())) {
                assertThat(j.getEntry("index.html")).as("javadoc of %s", m).isNotNull();
            }
        }
        assertThat(jarModules).contains("api", "domain", "nixl-backend", "cli");
    }

    @Test
    void theBomListsEveryPublishedModuleAtTheBuildsVersion() throws Exception {
        Document bom = xml(root.resolve("bom/pom.xml"));
        Element b = bom.getDocumentElement();
        assertThat(texts(b, "version")).containsExactly(version);
        assertThat(texts(b, "parent")).as("an imported BOM must not inherit the build's dependencyManagement").isEmpty();
        List<String> listed = texts(b, "dependencyManagement/dependencies/dependency/artifactId");
        assertThat(texts(b, "dependencyManagement/dependencies/dependency/version")).allMatch("${project.version}"::equals);

        List<String> published = new ArrayList<>();
        for (String m : modules()) {
            if (m.equals("bom") || m.equals(UNPUBLISHED)) {
                continue;
            }
            published.add(texts(xml(root.resolve(m).resolve("pom.xml")).getDocumentElement(), "artifactId").get(0));
        }
        assertThat(listed).containsExactlyInAnyOrderElementsOf(published);
    }

    @Test
    void theBomAndTheParentCarryTheReleaseMetadata() throws Exception {
        for (Path pom : List.of(root.resolve("pom.xml"), root.resolve("bom/pom.xml"))) {
            Element p = xml(pom).getDocumentElement();
            assertThat(texts(p, "url")).as("url in %s", pom).singleElement().asString().startsWith("https://");
            assertThat(texts(p, "licenses/license/name")).as("license in %s", pom)
                    .containsExactly("Apache License, Version 2.0");
            assertThat(texts(p, "developers/developer/name")).as("developers in %s", pom).isNotEmpty();
            assertThat(texts(p, "scm/connection")).as("scm in %s", pom).singleElement().asString().startsWith("scm:git:");
            assertThat(texts(p, "scm/url")).as("scm url in %s", pom).singleElement().asString().startsWith("https://");
        }
    }

    @Test
    void theLicenseIsApache2() throws IOException {
        String license = Files.readString(root.resolve("LICENSE"));
        assertThat(license).contains("Apache License").contains("Version 2.0, January 2004");
    }
}
