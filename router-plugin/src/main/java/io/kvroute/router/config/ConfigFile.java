package io.kvroute.router.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Config for hosted deployments (jetty-home module, servlet WAR), where there is no command line:
 * a YAML file whose keys are the flag names, and/or a flat property map ({@code kvroute.policy},
 * {@code kvroute.worker-urls}, ...) as a Jetty {@code start.d/*.ini} or a servlet init-param set
 * supplies it. Both go through {@link RouterOptions}, so validation, defaults and error messages are
 * exactly the command line's: a bad value fails with a {@link ConfigException} naming the key.
 */
public final class ConfigFile {

    /** Prefix of every router property in a Jetty base or servlet container. */
    public static final String PROPERTY_PREFIX = "kvroute.";
    /** The property naming the YAML file; its values apply first, other properties override them. */
    public static final String CONFIG_PROPERTY = PROPERTY_PREFIX + "config";

    private ConfigFile() {}

    /** Loads and validates a YAML config file (keys are flag names without the dashes). */
    public static RouterConfig load(Path yaml) {
        return RouterOptions.parse("--config", yaml.toString());
    }

    /**
     * Builds a config from properties: {@code kvroute.config} names an optional YAML file, every
     * other {@code kvroute.<flag-name>} sets that flag and overrides the file. Keys may also be given
     * without the prefix. A null or blank value means "not set" (Jetty XML passes absent properties
     * as null; an ini line {@code kvroute.policy=} is blank). Lists are comma separated. Unknown keys
     * fail naming the key, so a typo cannot silently fall back to a default.
     */
    public static RouterConfig fromProperties(Map<String, String> properties) {
        Set<String> known = flagNames();
        List<String> args = new ArrayList<>();
        String yaml = null;
        // Sorted, so the resulting argument order (and any error) does not depend on map iteration.
        for (Map.Entry<String, String> entry : new TreeMap<>(properties).entrySet()) {
            String value = entry.getValue();
            if (value == null || value.isBlank()) {
                continue;
            }
            String key = entry.getKey().startsWith(PROPERTY_PREFIX)
                    ? entry.getKey().substring(PROPERTY_PREFIX.length()) : entry.getKey();
            if (key.equals("config")) {
                yaml = value.trim();
            } else if (known.contains(key)) {
                args.add("--" + key + "=" + value.trim());
            } else {
                throw new ConfigException("unknown kvroute property '" + entry.getKey() + "' (keys are "
                        + PROPERTY_PREFIX + "<flag-name>, e.g. " + PROPERTY_PREFIX + "worker-urls)");
            }
        }
        if (yaml != null) {
            args.add(0, "--config=" + yaml);
        }
        return RouterOptions.parse(args.toArray(String[]::new));
    }

    /**
     * Every router flag name without its dashes, in declaration order ({@code config} included):
     * the keys a YAML file or a property map may use. Derived from {@link RouterOptions}, so the
     * jetty-home module's property list is checked against it and cannot drift.
     */
    public static Set<String> flagNames() {
        Set<String> names = new LinkedHashSet<>();
        for (OptionSpec option : RouterOptions.newCommandLine(new RouterOptions()).getCommandSpec().options()) {
            String name = option.longestName();
            if (name.startsWith("--") && !option.usageHelp() && !option.versionHelp()) {
                names.add(name.substring(2));
            }
        }
        return names;
    }
}
