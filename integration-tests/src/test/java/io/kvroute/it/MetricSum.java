package io.kvroute.it;

/** Sums Prometheus samples of one metric whose labels contain given {@code key="value"} pairs. */
final class MetricSum {
    private MetricSum() {}

    /** The sum over matching samples, or 0 when none matches (a counter never incremented is absent). */
    static double of(String scrape, String name, String... labels) {
        double sum = 0;
        for (String line : PrometheusText.parse(scrape)) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean all = true;
            for (String label : labels) {
                all &= line.contains(label);
            }
            if (all) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
