package io.kvroute.bench.stats;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A tiny parser for the Prometheus text exposition format (version 0.0.4), enough to scrape the
 * router's counters: {@code name{label="value",...} value [timestamp]}. Comment and blank lines are
 * skipped; label values may contain escaped {@code \"}, {@code \\} and {@code \n}; malformed lines
 * are skipped rather than failing the whole scrape (the benchmark must still report). Stateless.
 */
public final class PrometheusText {

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {}

    private PrometheusText() {}

    public static List<Sample> parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String rawLine : text.split("\n")) {
            String line = rawLine.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Sample sample = parseLine(line);
            if (sample != null) {
                samples.add(sample);
            }
        }
        return samples;
    }

    /**
     * Sums every sample of {@code metricName} grouped by the values of {@code labelNames}, joined by {@code _} when
     * there are several (a missing label counts as the empty string). Sorted by that key.
     */
    public static Map<String, Double> sumBy(List<Sample> samples, String metricName, String... labelNames) {
        Map<String, Double> sums = new TreeMap<>();
        StringBuilder key = new StringBuilder();
        for (Sample s : samples) {
            if (s.name().equals(metricName)) {
                key.setLength(0);
                for (int i = 0; i < labelNames.length; i++) {
                    key.append(i == 0 ? "" : "_").append(s.labels().getOrDefault(labelNames[i], ""));
                }
                sums.merge(key.toString(), s.value(), Double::sum);
            }
        }
        return sums;
    }

    private static Sample parseLine(String line) {
        int i = 0;
        int n = line.length();
        while (i < n && line.charAt(i) != '{' && !Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        String name = line.substring(0, i);
        if (name.isEmpty()) {
            return null;
        }
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < n && line.charAt(i) == '{') {
            i++;
            while (true) {
                while (i < n && (line.charAt(i) == ',' || line.charAt(i) == ' ')) {
                    i++;
                }
                if (i >= n) {
                    return null;
                }
                if (line.charAt(i) == '}') {
                    i++;
                    break;
                }
                int eq = line.indexOf('=', i);
                if (eq < 0 || eq + 1 >= n || line.charAt(eq + 1) != '"') {
                    return null;
                }
                String key = line.substring(i, eq).strip();
                StringBuilder value = new StringBuilder();
                int j = eq + 2;
                boolean closed = false;
                while (j < n) {
                    char c = line.charAt(j);
                    if (c == '\\' && j + 1 < n) {
                        char next = line.charAt(j + 1);
                        value.append(next == 'n' ? '\n' : next);
                        j += 2;
                    } else if (c == '"') {
                        closed = true;
                        j++;
                        break;
                    } else {
                        value.append(c);
                        j++;
                    }
                }
                if (!closed) {
                    return null;
                }
                labels.put(key, value.toString());
                i = j;
            }
        }
        String[] rest = line.substring(i).strip().split("\\s+");
        if (rest.length == 0 || rest[0].isEmpty()) {
            return null;
        }
        double value;
        try {
            value = parseValue(rest[0]);
        } catch (NumberFormatException e) {
            return null;
        }
        return new Sample(name, Collections.unmodifiableMap(labels), value);
    }

    private static double parseValue(String token) {
        return switch (token) {
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(token);
        };
    }
}
