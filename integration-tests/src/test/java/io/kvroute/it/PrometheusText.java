package io.kvroute.it;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** A strict-enough parser of the Prometheus text exposition format (0.0.4) for tests. */
final class PrometheusText {

    private static final Pattern SAMPLE = Pattern.compile(
            "^[a-zA-Z_:][a-zA-Z0-9_:]*(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\.)*\",?)*\\})? "
                    + "(-?[0-9.eE+-]+|NaN|\\+Inf|-Inf)( -?[0-9]+)?$");

    private PrometheusText() {}

    /** Returns the sample lines; throws on any line that is neither a comment nor a valid sample. */
    static List<String> parse(String text) {
        List<String> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
                continue;
            }
            if (line.startsWith("#")) {
                continue;
            }
            if (!SAMPLE.matcher(line).matches()) {
                throw new IllegalArgumentException("not a Prometheus sample line: " + line);
            }
            samples.add(line);
        }
        return samples;
    }
}
