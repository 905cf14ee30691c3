package io.kvroute.router.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The router's command line. A YAML plugin config file ({@code --config}) uses the flag names as
 * keys ({@code worker-urls: [...]}, {@code policy: round_robin}); its values are applied first
 * and flags given on the command line override them.
 */
@Command(name = "kvroute-router", mixinStandardHelpOptions = true,
        description = "OpenAI-compatible, cache- and load-aware router for GPU worker fleets.")
public final class RouterOptions {

    /**
     * The one flag that is not a {@link Setting}: it is read from the raw arguments before the parse
     * ({@link #configFileArgs}), because the file's values become leading arguments that the flags given
     * on the command line then override. Declared here so that {@code --help} and the reference list it.
     */
    @Option(names = "--config", description = "YAML plugin config file; keys are flag names.")
    Path config;

    /** Settings declared on records ({@link Setting}); their options are added by {@link #newCommandLine}. */
    private final SettingsBinder<ServerSettings> server = SettingsBinder.of(ServerSettings.class);
    private final SettingsBinder<AuthSettings> auth = SettingsBinder.of(AuthSettings.class);
    private final SettingsBinder<RoutingSettings> routing = SettingsBinder.of(RoutingSettings.class);
    private final SettingsBinder<DiscoverySettings> discovery = SettingsBinder.of(DiscoverySettings.class);
    private final SettingsBinder<HealthSettings> health = SettingsBinder.of(HealthSettings.class);
    private final SettingsBinder<RetrySettings> retry = SettingsBinder.of(RetrySettings.class);
    private final SettingsBinder<BreakerSettings> breaker = SettingsBinder.of(BreakerSettings.class);
    private final SettingsBinder<SessionSettings> session = SettingsBinder.of(SessionSettings.class);
    private final SettingsBinder<KvEventsSettings> kvEvents = SettingsBinder.of(KvEventsSettings.class);
    private final SettingsBinder<CacheAwareSettings> cacheAware = SettingsBinder.of(CacheAwareSettings.class);
    private final SettingsBinder<LoadSourceConfig> loadSource = SettingsBinder.of(LoadSourceConfig.class);
    private final SettingsBinder<TokenizationSettings> tokenization = SettingsBinder.of(TokenizationSettings.class);
    private final SettingsBinder<PdSettings> pd = SettingsBinder.of(PdSettings.class);
    private final SettingsBinder<TenantsConfig> tenants = SettingsBinder.of(TenantsConfig.class);
    private final SettingsBinder<LoraConfig> lora = SettingsBinder.of(LoraConfig.class);
    private final SettingsBinder<TimeoutSettings> timeouts = SettingsBinder.of(TimeoutSettings.class);
    private final SettingsBinder<ObservabilityConfig> observability = SettingsBinder.of(ObservabilityConfig.class);

    /**
     * Parses flags (and the config file they name) into a validated config.
     *
     * @throws ConfigException naming the flag and value on any invalid input
     */
    public static RouterConfig parse(String... args) {
        // A flag given on the command line replaces the file's value whole; without this, list flags
        // (picocli appends) would add to the file's list instead of overriding it.
        Set<String> given = new HashSet<>();
        for (String arg : args) {
            if (arg.startsWith("--")) {
                given.add(arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg);
            }
        }
        List<String> all = new ArrayList<>();
        for (String fileArg : configFileArgs(args)) {
            if (!given.contains(fileArg.substring(0, fileArg.indexOf('=')))) {
                all.add(fileArg);
            }
        }
        all.addAll(List.of(args));
        RouterOptions options = new RouterOptions();
        CommandLine cli = newCommandLine(options);
        try {
            cli.parseArgs(all.toArray(String[]::new));
        } catch (CommandLine.ParameterException e) {
            throw new ConfigException(e.getMessage(), e);
        }
        return options.toConfig();
    }

    /**
     * Prints the usage (or version) and returns true when {@code args} ask for {@code --help} /
     * {@code -h} ({@code --version} / {@code -V}): the caller then exits 0 without starting anything.
     * False otherwise, also for flags that do not parse (the normal start reports them).
     */
    public static boolean printHelpIfRequested(java.io.PrintWriter out, String... args) {
        return printHelpIfRequested(newCommandLine(new RouterOptions()), out, args);
    }

    /** {@link #printHelpIfRequested(java.io.PrintWriter, String...)} for any picocli command (the mock worker's too). */
    public static boolean printHelpIfRequested(CommandLine cli, java.io.PrintWriter out, String... args) {
        try {
            cli.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            return false;
        }
        if (cli.isUsageHelpRequested()) {
            cli.usage(out);
        } else if (cli.isVersionHelpRequested()) {
            cli.printVersionHelp(out);
        } else {
            return false;
        }
        out.flush();
        return true;
    }

    /** A picocli CommandLine over {@code options} that lets later values override earlier ones. */
    public static CommandLine newCommandLine(Object options) {
        CommandLine cli = new CommandLine(options);
        if (options instanceof RouterOptions router) {
            for (SettingsBinder<?> binder : List.of(router.server, router.auth, router.routing, router.discovery, router.health, router.retry, router.breaker, router.session, router.kvEvents,
                    router.timeouts, router.observability, router.cacheAware,
                    router.loadSource, router.tokenization, router.pd, router.tenants, router.lora)) {
                binder.options().forEach(cli.getCommandSpec()::addOption);
            }
        }
        cli.setOverwrittenOptionsAllowed(true);
        return cli;
    }

    RouterConfig toConfig() {
        // The records are built in this order, so a bad listen address or bound is reported before a bad policy.
        return RouterConfig.builder()
                .server(server.build())
                .auth(auth.build().withEnvironment(System::getenv))
                .routing(routing.build())
                .discovery(discovery.build())
                .health(health.build())
                .retry(retry.build())
                .breaker(breaker.build())
                .session(session.build())
                .kvEvents(kvEvents.build())
                .cacheAware(cacheAware.build())
                .loadSource(loadSource.build())
                .tokenization(tokenization.build())
                .pd(pd.build())
                .tenants(tenants.build())
                .lora(lora.build())
                .timeouts(timeouts.build())
                .observability(observability.build())
                .build();
    }

    /** Finds {@code --config} in args and turns the YAML file into leading flag arguments. */
    static List<String> configFileArgs(String[] args) {
        Path file = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--config") && i + 1 < args.length) {
                file = Path.of(args[i + 1]);
            } else if (args[i].startsWith("--config=")) {
                file = Path.of(args[i].substring("--config=".length()));
            }
        }
        return file == null ? List.of() : yamlToArgs(file);
    }

    /**
     * Converts a flat YAML map of flag names to values into {@code --flag value} arguments: a list becomes
     * its comma-separated items, a mapping its comma-separated {@code KEY=VALUE} entries (per-model
     * settings such as {@code tokenizer-path}).
     */
    public static List<String> yamlToArgs(Path file) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new ConfigException("--config cannot read '" + file + "': " + e.getMessage(), e);
        }
        List<String> out = new ArrayList<>();
        if (root == null || root.isNull() || root.isMissingNode()) {
            return out;
        }
        if (!root.isObject()) {
            throw new ConfigException("--config '" + file + "' must be a YAML mapping of flag names to values");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String flag = "--" + field.getKey();
            JsonNode value = field.getValue();
            if (flag.equals("--config") || value.isNull()) {
                continue; // YAML null (`key:` or `key: null`) means absent: the default applies
            }
            if (value.isBoolean()) {
                out.add(flag + "=" + value.asBoolean());
            } else if (value.isArray()) {
                List<String> parts = new ArrayList<>();
                value.forEach(v -> parts.add(v.asText()));
                out.add(flag + "=" + String.join(",", parts));
            } else if (value.isValueNode()) {
                out.add(flag + "=" + value.asText());
            } else if (value.isObject()) {
                // a mapping is a list of KEY=VALUE entries: tokenizer-path: {qwen3: /models/qwen3, llama3: /models/llama3}
                List<String> entries = new ArrayList<>();
                for (Iterator<Map.Entry<String, JsonNode>> e = value.fields(); e.hasNext(); ) {
                    Map.Entry<String, JsonNode> entry = e.next();
                    if (!entry.getValue().isValueNode() || entry.getValue().isNull()) {
                        throw new ConfigException("--config key '" + field.getKey() + "." + entry.getKey()
                                + "' must be a scalar");
                    }
                    entries.add(entry.getKey() + "=" + entry.getValue().asText());
                }
                out.add(flag + "=" + String.join(",", entries));
            } else {
                throw new ConfigException("--config key '" + field.getKey() + "' must be a scalar, a list or a mapping");
            }
        }
        return out;
    }
}
