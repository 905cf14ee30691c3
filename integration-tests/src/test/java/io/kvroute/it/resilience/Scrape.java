package io.kvroute.it.resilience;

import java.util.ArrayList;
import java.util.List;

/** Reads samples out of the router's Prometheus scrape. */
final class Scrape {

    private Scrape() {}

    /**
     * Sums the samples of {@code name} (exact metric name, labels ignored) whose label set contains
     * every {@code labelPart} (e.g. {@code to="open"}); 0 when none match.
     */
    static double sum(Client client, Fleet fleet, String name, String... labelParts) throws Exception {
        Client.Reply scrape = client.get(fleet.url("/metrics"));
        if (scrape.status() != 200) {
            throw new AssertionError("scrape failed: " + scrape.status());
        }
        double sum = 0;
        for (String line : lines(scrape.body())) {
            int space = line.lastIndexOf(' ');
            String key = line.substring(0, space);
            String metric = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
            if (!metric.equals(name)) {
                continue;
            }
            boolean all = true;
            for (String part : labelParts) {
                all &= key.contains(part);
            }
            if (all) {
                sum += Double.parseDouble(line.substring(space + 1));
            }
        }
        return sum;
    }

    private static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.isEmpty() && !line.startsWith("#")) {
                out.add(line);
            }
        }
        return out;
    }
}
