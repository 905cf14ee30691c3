package io.kvroute.bench;

import io.kvroute.bench.scenario.Scenarios;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Scenarios by name, in registration order. The default registry holds the built-in fleet
 * scenarios plus any {@link Scenario} registered through {@link ServiceLoader}
 * ({@code META-INF/services/io.kvroute.bench.Scenario}), which is how the {@code tree} and
 * {@code pd} scenarios plug in without editing this class. Immutable.
 */
public final class ScenarioRegistry {

    private final Map<String, Scenario> byName;
    private final List<String> names;

    public ScenarioRegistry(Collection<Scenario> scenarios) {
        Map<String, Scenario> map = new LinkedHashMap<>();
        for (Scenario s : scenarios) {
            Objects.requireNonNull(s, "scenario");
            if (map.putIfAbsent(s.name(), s) != null) {
                throw new IllegalArgumentException("two scenarios named " + s.name());
            }
        }
        this.byName = Map.copyOf(map);
        this.names = List.copyOf(map.keySet());
    }

    /** Built-in scenarios followed by those found through {@link ServiceLoader}. */
    public static ScenarioRegistry defaults() {
        List<Scenario> all = new ArrayList<>(Scenarios.builtIn());
        ServiceLoader.load(Scenario.class).forEach(all::add);
        return new ScenarioRegistry(all);
    }

    public Optional<Scenario> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** Names in registration order. */
    public List<String> names() {
        return names;
    }
}
