package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The ingress package stays transport-neutral: the Jetty and Servlet adapters depend on it, never the
 * other way round. Reads the package's source files, so a Jetty or Servlet type cannot creep in through an
 * import or an inline qualified name (in code or in a comment: name such types by their simple name there).
 */
class IngressPackageBoundaryTest {

    private static final Path INGRESS = Path.of("src/main/java/io/kvroute/router/ingress");
    private static final Pattern TRANSPORT = Pattern.compile("\\b(org\\.eclipse\\.jetty|jakarta\\.servlet)\\.[\\w.]*");
    private static final Pattern ADAPTER = Pattern.compile("\\bio\\.kvroute\\.router\\.(http|servlet)\\.\\w+");

    @Test
    void noIngressFile_namesJettyOrTheServletApi() throws Exception {
        Map<String, List<String>> found = scan(TRANSPORT);
        assertThat(found).as("Jetty or Servlet API types named in ingress/ (file -> names)").isEmpty();
    }

    @Test
    void ingress_takesNothingFromTheAdapters() throws Exception {
        Map<String, List<String>> found = scan(ADAPTER);
        assertThat(found).as("adapter types named in ingress/ (file -> names)").isEmpty();
    }

    /** Every match of {@code pattern}, by file; fails if the package was not found. */
    private static Map<String, List<String>> scan(Pattern pattern) throws Exception {
        Map<String, List<String>> found = new TreeMap<>();
        List<String> scanned = new ArrayList<>();
        try (var files = Files.list(INGRESS)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                String name = file.getFileName().toString();
                scanned.add(name);
                Matcher m = pattern.matcher(Files.readString(file));
                while (m.find()) {
                    found.computeIfAbsent(name, k -> new ArrayList<>()).add(m.group());
                }
            }
        }
        assertThat(scanned).as("files scanned in " + INGRESS).contains("InferenceFrontDoor.java", "package-info.java");
        return found;
    }
}
