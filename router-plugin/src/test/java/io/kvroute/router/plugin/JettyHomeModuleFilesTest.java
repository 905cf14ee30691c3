package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.ConfigFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The jetty-home module's files list every router flag: the ini-template as a commented property,
 * the XML as a property passed to {@link JettyHomeModule#mount}. A flag added to RouterOptions
 * without them fails here. The listen address is Jetty's (the http module), so host and port are
 * not router properties.
 */
class JettyHomeModuleFilesTest {

    private static final Path MODULE_DIR = Path.of("src/main/jetty-module");
    private static final Set<String> JETTY_OWNED = Set.of("host", "port");

    @Test
    void iniTemplate_listsEveryRouterFlagAsACommentedProperty() throws Exception {
        String mod = Files.readString(MODULE_DIR.resolve("modules/kvroute-router.mod"));
        String template = mod.substring(mod.indexOf("[ini-template]"));
        Set<String> listed = matches(Pattern.compile("(?m)^# kvroute\\.([a-z0-9-]+)="), template);
        assertThat(listed).containsExactlyInAnyOrderElementsOf(expected());
        assertThat(template).doesNotContainPattern("(?m)^kvroute\\."); // nothing set by default
    }

    @Test
    void xml_passesEveryRouterFlagToTheMount() throws Exception {
        String xml = Files.readString(MODULE_DIR.resolve("etc/kvroute-router.xml"));
        Set<String> keys = matches(Pattern.compile("<Item>kvroute\\.([a-z0-9-]+)</Item>"), xml);
        Set<String> properties = matches(Pattern.compile("<Property name=\"kvroute\\.([a-z0-9-]+)\"/>"), xml);
        assertThat(keys).containsExactlyInAnyOrderElementsOf(expected());
        assertThat(properties).containsExactlyInAnyOrderElementsOf(expected());
        assertThat(xml).contains("class=\"" + JettyHomeModule.class.getName() + "\" name=\"mount\"");
    }

    private static Set<String> expected() {
        Set<String> flags = new LinkedHashSet<>(ConfigFile.flagNames());
        flags.removeAll(JETTY_OWNED);
        return flags;
    }

    private static Set<String> matches(Pattern pattern, String text) {
        Set<String> out = new LinkedHashSet<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }
}
