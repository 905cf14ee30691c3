package io.kvroute.router.tenant;

import java.util.Locale;

/**
 * A request's priority class, highest first: {@code system} (health and admin traffic),
 * {@code interactive}, {@code default}, {@code batch}. The names and the four-level ladder follow
 * SMG's scheduler ({@code model_gateway/src/middleware/scheduler/class.rs}), with {@code bulk}
 * called {@code batch} here. A request asks for a class in the {@code x-kvroute-priority} header;
 * the ask is clamped to its tenant's highest class, so a client can lower itself but never rise.
 */
public enum PriorityClass {
    BATCH("batch"),
    DEFAULT("default"),
    INTERACTIVE("interactive"),
    SYSTEM("system");

    /** The request header a client names its class in. */
    public static final String HEADER = "x-kvroute-priority";

    private static final PriorityClass[] HIGH_TO_LOW = {SYSTEM, INTERACTIVE, DEFAULT, BATCH};

    private final String label;

    PriorityClass(String label) {
        this.label = label;
    }

    /** The metric label and the name in the tenants file and the header. */
    public String label() {
        return label;
    }

    /** Levels above {@code default}: batch -1, default 0, interactive 1, system 2 (the engine priority's rank). */
    public int levelsAboveDefault() {
        return ordinal() - DEFAULT.ordinal();
    }

    /** Strictly above {@code other}. */
    public boolean above(PriorityClass other) {
        return ordinal() > other.ordinal();
    }

    /** The classes from the highest to the lowest (a shared array: do not modify). */
    static PriorityClass[] highToLow() {
        return HIGH_TO_LOW;
    }

    /** The class a name denotes (case-insensitive, trimmed), or null for null or an unknown name. */
    public static PriorityClass parse(String name) {
        if (name == null) {
            return null;
        }
        String key = name.trim().toLowerCase(Locale.ROOT);
        for (PriorityClass c : values()) {
            if (c.label.equals(key)) {
                return c;
            }
        }
        return null;
    }

    /**
     * The class a request gets: the one its header asks for (absent or unknown: {@code default}),
     * never above {@code ceiling}.
     */
    public static PriorityClass effective(String header, PriorityClass ceiling) {
        PriorityClass asked = parse(header);
        if (asked == null) {
            asked = DEFAULT;
        }
        return asked.above(ceiling) ? ceiling : asked;
    }
}
