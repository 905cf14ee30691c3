package io.kvroute.router.config;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares one router flag on a component of a settings record: its name, default, description
 * and bounds, in one place. {@link SettingsBinder} turns the record's components into command-line
 * options (also the YAML file's keys and the jetty-home module's {@code kvroute.<name>}
 * properties), converts and bounds the values, and builds the record; the configuration reference
 * (docs/configuration.md, the module's ini-template and XML) is checked against these declarations
 * by {@code ConfigReferenceTest}. Adding a flag is: a component with this annotation, its use, a test.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.RECORD_COMPONENT)
public @interface Setting {

    /** {@link #defaultValue} of a setting that is unset (null) unless given. */
    String UNSET = "\u0000unset";

    /** Flag name without the leading dashes, e.g. {@code retry-max-attempts}. */
    String name();

    /** The default as it would be written on the command line, or {@link #UNSET}. */
    String defaultValue();

    /** One sentence or two; the default is appended as "(default X)" where one is set. */
    String description();

    /** Smallest accepted numeric value (inclusive). */
    double min() default Double.NEGATIVE_INFINITY;

    /** Largest accepted numeric value (inclusive). */
    double max() default Double.POSITIVE_INFINITY;

    /** Numeric values must be strictly above zero (and finite). */
    boolean positive() default false;

    /** The accepted words of a text setting, compared case-insensitively and kept lower-case; empty = any. */
    String[] choices() default {};

    /**
     * A list setting whose values may also follow the flag separated by spaces, up to the next flag
     * ({@code --selector app=a tier=b}, picocli's arity {@code 1..*}); otherwise one value per occurrence,
     * comma separated.
     */
    boolean spaceSeparated() default false;
}
