package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The configuration reference is generated from the router's flag declarations (the picocli
 * options of {@link RouterOptions} and the {@link Setting}s of its settings records): the rows of
 * docs/configuration.md's router table, the jetty-home module's ini-template and the properties its
 * XML passes to the mount. Each file keeps a marked region; this test fails on any drift (a flag,
 * a default, a description) and prints the file to commit. Regenerate them all with
 * {@code mvn -pl router-plugin test -Dtest=ConfigReferenceTest -Dkvroute.regenerate=true}.
 *
 * <p>It also checks that a "(default X)" written in a description states the value the
 * declaration really starts with.
 */
class ConfigReferenceTest {

    private static final Path DOCS = Path.of("../docs/configuration.md");
    private static final Path MOD = Path.of("src/main/jetty-module/modules/kvroute-router.mod");
    private static final Path XML = Path.of("src/main/jetty-module/etc/kvroute-router.xml");
    /** Jetty owns the listen address; the config file is resolved by the XML itself. */
    private static final Set<String> NOT_MODULE_PROPERTIES = Set.of("host", "port", "config");
    private static final boolean REGENERATE = Boolean.getBoolean("kvroute.regenerate");

    @Test
    void docsTable_isGeneratedFromTheDeclarations() throws IOException {
        StringBuilder rows = new StringBuilder("| Flag | Meaning (default) |\n|---|---|\n");
        for (OptionSpec option : options()) {
            rows.append("| `").append(option.longestName()).append("` | ")
                    .append(description(option).replace("|", "\\|")).append(" |\n");
        }
        check(DOCS, "<!-- begin generated: router flags (ConfigReferenceTest) -->\n", "<!-- end generated -->\n", rows.toString());
    }

    @Test
    void moduleIniTemplate_isGeneratedFromTheDeclarations() throws IOException {
        StringBuilder ini = new StringBuilder();
        for (OptionSpec option : moduleOptions()) {
            ini.append("## ").append(description(option)).append('\n')
                    .append("# kvroute.").append(name(option)).append('=').append(initial(option)).append("\n\n");
        }
        check(MOD, "## --- begin generated from the router's flag declarations ---\n\n", "## --- end generated ---\n",
                ini.toString());
    }

    @Test
    void moduleXml_passesEveryDeclaredFlag() throws IOException {
        StringBuilder xml = new StringBuilder();
        for (OptionSpec option : moduleOptions()) {
            String key = "kvroute." + name(option);
            xml.append("        <Entry><Item>").append(key).append("</Item><Item><Property name=\"").append(key)
                    .append("\"/></Item></Entry>\n");
        }
        check(XML, "        <!-- begin generated from the router's flag declarations -->\n",
                "        <!-- end generated -->\n", xml.toString());
    }

    @Test
    void aDefaultWrittenInADescription_isTheDeclaredInitialValue() {
        Pattern stated = Pattern.compile("\\(default ([^ );,:]+)");
        List<String> drift = new ArrayList<>();
        for (OptionSpec option : options()) {
            Matcher m = stated.matcher(description(option));
            if (!m.find()) {
                continue;
            }
            String text = m.group(1).replaceAll("\\.$", "");
            Object value = option.initialValue();
            boolean agrees = value == null || value instanceof Collection<?>
                    ? text.startsWith("unset") || text.equals("empty") || text.equals("none") || text.equals("off")
                    : text.equals(render(value)) || text.equals(String.valueOf(value));
            if (!agrees) {
                drift.add(option.longestName() + ": description says " + text + ", declaration starts at " + value);
            }
        }
        assertThat(drift).isEmpty();
    }

    @Test
    void settingsRecords_declareEveryComponentOnce() {
        for (Class<? extends Record> type : List.of(RetrySettings.class, HealthSettings.class, BreakerSettings.class,
                SessionSettings.class, KvEventsSettings.class, TimeoutSettings.class, ObservabilityConfig.class,
                CacheAwareSettings.class, LoadSourceConfig.class, TokenizationSettings.class, PdSettings.class,
                TenantsConfig.class, LoraConfig.class, ServerSettings.class, AuthSettings.class, RoutingSettings.class,
                DiscoverySettings.class)) {
            assertThat(SettingsBinder.defaults(type)).isNotNull();
            for (var component : type.getRecordComponents()) {
                assertThat(component.getAnnotation(Setting.class)).as(type.getSimpleName() + "." + component.getName()).isNotNull();
            }
        }
    }

    private static List<OptionSpec> options() {
        List<OptionSpec> out = new ArrayList<>();
        for (OptionSpec option : RouterOptions.newCommandLine(new RouterOptions()).getCommandSpec().options()) {
            if (!option.usageHelp() && !option.versionHelp()) {
                out.add(option);
            }
        }
        return out;
    }

    private static List<OptionSpec> moduleOptions() {
        return options().stream().filter(o -> !NOT_MODULE_PROPERTIES.contains(name(o))).toList();
    }

    private static String name(OptionSpec option) {
        return option.longestName().substring(2);
    }

    private static String description(OptionSpec option) {
        return String.join(" ", option.description());
    }

    private static String initial(OptionSpec option) {
        Object value = option.initialValue();
        if (value == null) {
            return "";
        }
        if (value instanceof Collection<?> list) {
            return String.join(",", list.stream().map(String::valueOf).toList());
        }
        return render(value);
    }

    private static String render(Object value) {
        if (value instanceof Double d && d == Math.rint(d) && !d.isInfinite()) {
            return Long.toString(d.longValue());
        }
        return String.valueOf(value);
    }

    /** Compares (or, with -Dkvroute.regenerate=true, rewrites) the region between the markers. */
    private static void check(Path file, String begin, String end, String generated) throws IOException {
        String text = Files.readString(file);
        int from = text.indexOf(begin);
        int to = text.indexOf(end);
        assertThat(from).as(file + " has the marker " + begin.strip()).isNotNegative();
        assertThat(to).as(file + " has the marker " + end.strip()).isGreaterThan(from);
        String expected = text.substring(0, from + begin.length()) + generated + text.substring(to);
        if (REGENERATE) {
            Files.writeString(file, expected);
        }
        assertThat(text).as(file + " drifted from the flag declarations; regenerate with -Dkvroute.regenerate=true")
                .isEqualTo(expected);
    }
}
