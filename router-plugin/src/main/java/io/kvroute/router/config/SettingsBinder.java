package io.kvroute.router.config;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Objects;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Binds a settings record (every component annotated with {@link Setting}) to the command line:
 * {@link #options()} declares one picocli option per component, whose setter only keeps the text
 * given; {@link #build()} converts each value (or the declared default), checks the declared
 * bounds, and calls the record's canonical constructor, whose compact constructor checks anything
 * that spans several settings. Every failure is a {@link ConfigException} naming the flag and the
 * value, in the same words as {@link ConfigValidator}.
 *
 * <p>One binder per parse (it holds the parsed text); not thread-safe. The record itself is
 * immutable and is handed straight to the component that uses it.
 *
 * @param <R> the settings record
 */
public final class SettingsBinder<R extends Record> {

    private final Class<R> type;
    private final RecordComponent[] components;
    private final Setting[] settings;
    private final String[] given;

    private SettingsBinder(Class<R> type) {
        this.type = Objects.requireNonNull(type, "type");
        this.components = type.getRecordComponents();
        this.settings = new Setting[components.length];
        for (int i = 0; i < components.length; i++) {
            settings[i] = components[i].getAnnotation(Setting.class);
            if (settings[i] == null) {
                throw new IllegalStateException(type.getSimpleName() + "." + components[i].getName()
                        + " has no @Setting");
            }
        }
        this.given = new String[components.length];
    }

    /** A fresh binder for {@code type}. */
    public static <R extends Record> SettingsBinder<R> of(Class<R> type) {
        return new SettingsBinder<>(type);
    }

    /** The record built from its declared defaults. */
    public static <R extends Record> R defaults(Class<R> type) {
        return of(type).build();
    }

    /**
     * The record built from flags alone, e.g. {@code parse(RetrySettings.class, "--retry-max-attempts=5")}:
     * for embedders and tests that need one concern's settings without a whole router config.
     */
    public static <R extends Record> R parse(Class<R> type, String... args) {
        SettingsBinder<R> binder = of(type);
        CommandLine cli = new CommandLine(CommandLine.Model.CommandSpec.create());
        binder.options().forEach(cli.getCommandSpec()::addOption);
        cli.setOverwrittenOptionsAllowed(true);
        try {
            cli.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            throw new ConfigException(e.getMessage(), e);
        }
        return binder.build();
    }

    /**
     * The flag of the first component in which {@code settings} differs from {@code defaults}, or null when
     * none does: for rules such as "these flags need that policy".
     */
    public static <R extends Record> String firstChangedFlag(R settings, R defaults) {
        for (RecordComponent component : settings.getClass().getRecordComponents()) {
            try {
                Object a = component.getAccessor().invoke(settings);
                Object b = component.getAccessor().invoke(defaults);
                if (!Objects.equals(a, b)) {
                    return "--" + component.getAnnotation(Setting.class).name();
                }
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot read " + component.getName(), e);
            }
        }
        return null;
    }

    /**
     * Checks every numeric component of {@code settings} against its declared bounds, as {@link #build()} does for
     * values given as text: for records built in code (the {@link RouterConfig.Builder}).
     */
    public static void checkBounds(Record settings) {
        for (RecordComponent component : settings.getClass().getRecordComponents()) {
            Setting s = component.getAnnotation(Setting.class);
            Object value;
            try {
                value = component.getAccessor().invoke(settings);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot read " + component.getName(), e);
            }
            if (s != null && value instanceof Number number) {
                bounded(s, String.valueOf(value), number.doubleValue());
            }
        }
    }

    /** The picocli options of this record's settings; their values are kept by this binder. */
    public List<OptionSpec> options() {
        List<OptionSpec> out = new ArrayList<>(components.length);
        for (int i = 0; i < components.length; i++) {
            int index = i;
            Setting s = settings[i];
            boolean listTyped = components[i].getType() == List.class || components[i].getType() == Map.class;
            OptionSpec.Builder option = OptionSpec.builder("--" + s.name())
                    .type(String.class)
                    .paramLabel("<" + components[i].getName() + ">")
                    .description(description(s))
                    .initialValue(s.defaultValue().equals(Setting.UNSET) ? null : s.defaultValue())
                    .setter(new CommandLine.Model.ISetter() {
                        @Override
                        @SuppressWarnings("unchecked")
                        public <T> T set(T value) {
                            String previous = given[index];
                            // a list flag given twice keeps both values, as picocli's own list options do
                            boolean append = listTyped && previous != null && !previous.isEmpty() && value != null;
                            given[index] = append ? previous + "," + value : (String) value;
                            return (T) previous;
                        }
                    })
                    .getter(new CommandLine.Model.IGetter() {
                        @Override
                        @SuppressWarnings("unchecked")
                        public <T> T get() {
                            // the default when nothing was given, so picocli's initial value is the declared one
                            String value = given[index] != null ? given[index] : s.defaultValue();
                            return (T) (value.equals(Setting.UNSET) ? null : value);
                        }
                    });
            if (components[i].getType() == boolean.class) {
                option.arity("0..1").fallbackValue("true");
            } else if (s.spaceSeparated()) {
                option.arity("1..*").parameterConsumer(SettingsBinder::takeUntilNextFlag);
            }
            out.add(option.build());
        }
        return out;
    }

    /** Takes one value and every following argument up to the next flag, as one comma-separated value. */
    private static void takeUntilNextFlag(java.util.Stack<String> args, CommandLine.Model.ArgSpec argSpec,
            CommandLine.Model.CommandSpec commandSpec) {
        String flag = ((OptionSpec) argSpec).longestName();
        if (args.isEmpty()) {
            throw new CommandLine.ParameterException(commandSpec.commandLine(),
                    "Missing required parameter for option '" + flag + "'");
        }
        List<String> values = new ArrayList<>();
        values.add(args.pop());
        while (!args.isEmpty() && !args.peek().startsWith("-")) {
            values.add(args.pop());
        }
        argSpec.setValue(String.join(",", values));
    }

    /** The description shown by {@code --help} and in the configuration reference: with "(default X)" when set. */
    public static String description(Setting s) {
        if (s.defaultValue().equals(Setting.UNSET)) {
            return s.description();
        }
        if (s.defaultValue().isEmpty()) {
            return s.description() + "."; // an empty list or text: nothing to show
        }
        return s.description() + " (default " + s.defaultValue() + ").";
    }

    /** Builds the record from the values given (or the declared defaults). */
    public R build() {
        Object[] values = new Object[components.length];
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < components.length; i++) {
            types[i] = components[i].getType();
            String text = given[i] != null ? given[i] : settings[i].defaultValue();
            values[i] = text.equals(Setting.UNSET) ? unset(types[i], settings[i]) : convert(types[i], settings[i], text);
        }
        try {
            Constructor<R> constructor = type.getDeclaredConstructor(types);
            constructor.setAccessible(true);
            return constructor.newInstance(values);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof ConfigException ce) {
                throw ce;
            }
            if (e.getCause() instanceof IllegalArgumentException iae) {
                throw new ConfigException(iae.getMessage(), iae);
            }
            throw new IllegalStateException("cannot build " + type.getSimpleName(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot build " + type.getSimpleName(), e);
        }
    }

    private static Object unset(Class<?> type, Setting s) {
        if (type.isPrimitive()) {
            throw new IllegalStateException("--" + s.name() + " is primitive and cannot be unset");
        }
        return null;
    }

    private static Object convert(Class<?> type, Setting s, String raw) {
        String text = raw.trim();
        String flag = "--" + s.name();
        try {
            if (type == String.class) {
                if (s.choices().length == 0) {
                    return text;
                }
                String lower = text.toLowerCase(Locale.ROOT);
                if (!Arrays.asList(s.choices()).contains(lower)) {
                    throw ConfigValidator.fail(flag, raw, "is not one of: " + String.join(", ", s.choices()));
                }
                return lower;
            }
            if (type == boolean.class || type == Boolean.class) {
                String lower = text.toLowerCase(Locale.ROOT);
                if (!lower.equals("true") && !lower.equals("false")) {
                    throw ConfigValidator.fail(flag, raw, "must be true or false");
                }
                return Boolean.parseBoolean(lower);
            }
            if (type == List.class) {
                return Arrays.stream(text.split(",")).map(String::trim).filter(part -> !part.isEmpty()).toList();
            }
            if (type == Map.class) {
                Map<String, String> map = new LinkedHashMap<>();
                for (String entry : text.split(",")) {
                    String part = entry.trim();
                    if (part.isEmpty()) {
                        continue;
                    }
                    int eq = part.indexOf('=');
                    String key = eq < 0 ? "" : part.substring(0, eq).trim();
                    String value = eq < 0 ? "" : part.substring(eq + 1).trim();
                    if (key.isEmpty() || value.isEmpty()) {
                        throw ConfigValidator.fail(flag, part, "must be NAME=VALUE entries");
                    }
                    if (map.put(key, value) != null) {
                        throw ConfigValidator.fail(flag, part, "names '" + key + "' twice");
                    }
                }
                return Map.copyOf(map);
            }
            if (type == int.class || type == Integer.class) {
                return (int) bounded(s, raw, Integer.parseInt(text));
            }
            if (type == long.class || type == Long.class) {
                return (long) bounded(s, raw, Long.parseLong(text));
            }
            if (type == double.class || type == Double.class) {
                return bounded(s, raw, Double.parseDouble(text));
            }
        } catch (NumberFormatException e) {
            throw ConfigValidator.fail(flag, raw, "must be a " + (type == double.class || type == Double.class
                    ? "number" : "whole number"));
        }
        throw new IllegalStateException(flag + " has unsupported type " + type.getName());
    }

    private static double bounded(Setting s, String raw, double value) {
        String flag = "--" + s.name();
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            throw ConfigValidator.fail(flag, raw, "must be a finite number");
        }
        if (s.positive() && !(value > 0)) {
            throw ConfigValidator.fail(flag, raw, "must be a positive number");
        }
        if (value < s.min() || value > s.max()) {
            boolean hasMin = s.min() != Double.NEGATIVE_INFINITY;
            boolean hasMax = s.max() != Double.POSITIVE_INFINITY;
            throw ConfigValidator.fail(flag, raw, hasMin && hasMax
                    ? "must be between " + number(s.min()) + " and " + number(s.max())
                    : hasMin ? "must be at least " + number(s.min()) : "must be at most " + number(s.max()));
        }
        return value;
    }

    private static String number(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15 ? Long.toString((long) value) : Double.toString(value);
    }
}
