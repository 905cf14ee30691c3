package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Maps one parsed {@code /metrics} scrape into per-rank {@link LoadReport}s, the same shape a pushed
 * LoadStat gives, so the queue gate, the saturation pin, hard admission and the pressure comparison
 * read a scraped engine exactly as a pushing one.
 *
 * <p><b>Ranks.</b> vLLM serves one series per data-parallel engine, label {@code engine="<rank>"}
 * (vLLM {@code vllm/v1/metrics/loggers.py}, {@code labelnames = ["model_name", "engine"]}); SGLang adds
 * {@code dp_rank} under data parallelism. Ranks are the distinct values of the rank label, ordered
 * numerically (an external-LB vLLM pod serves {@code engine="3"} alone: it becomes the worker's only
 * rank, index 0); a series without the label is rank 0. Series of one rank that differ in other
 * labels (several {@code model_name}s) are summed.
 *
 * <p><b>Fields.</b> waiting and running come from the engine's gauges; each rank must have both, or
 * the scrape is refused ({@code missing_metric}): a rank with a missing queue gauge must not look
 * idle. The KV capacity in tokens is {@code block_size * num_gpu_blocks} from vLLM's
 * {@code vllm:cache_config_info} labels, or a capacity gauge (SGLang); {@code num_tokens} is then the
 * usage fraction times that capacity. Without a capacity both are 0, which every consumer reads as
 * "unknown" (hard admission admits). No kvroute extension fields: the pressure comparison falls back
 * to router-local counts for these workers, as for a plain SGLang LoadStat. Pure; thread-safe.
 */
final class MetricsLoadMapper {
    /** Largest rank count accepted from one exposition (a bound, as for advertised dp sizes). */
    static final int MAX_RANKS = 1024;

    /** A scrape that cannot be turned into load; {@code reason} is the counter label. */
    static final class Refused extends Exception {
        final String reason;

        Refused(String reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }
    }

    /**
     * The mapped scrape.
     *
     * @param rankLabels the rank label value of each report, in report order
     * @param blockSize the engine's KV block size when it exposes one (vLLM cache_config_info), else 0
     */
    record Reading(List<LoadReport> ranks, List<String> rankLabels, int blockSize) {}

    private MetricsLoadMapper() {}

    static Reading map(Map<String, List<PrometheusTextParser.Sample>> samples, EngineMetricNames names, long seq)
            throws Refused {
        TreeMap<String, double[]> byRank = new TreeMap<>(MetricsLoadMapper::compareRank);
        // slots: 0 waiting, 1 running, 2 kv usage, 3 capacity tokens, 4 waiting seen, 5 running seen, 6 block size
        accumulate(samples.get(names.waiting()), names, byRank, 0, 4);
        accumulate(samples.get(names.running()), names, byRank, 1, 5);
        if (!names.kvUsage().isEmpty()) {
            accumulate(samples.get(names.kvUsage()), names, byRank, 2, -1);
        }
        if (!names.capacityTokens().isEmpty()) {
            accumulate(samples.get(names.capacityTokens()), names, byRank, 3, -1);
        }
        int blockSize = 0;
        if (!names.cacheInfo().isEmpty() && samples.containsKey(names.cacheInfo())) {
            for (PrometheusTextParser.Sample s : samples.get(names.cacheInfo())) {
                long bs = label(s, names.blockSizeLabel());
                long blocks = label(s, names.numBlocksLabel());
                if (bs > 0) {
                    blockSize = (int) Math.min(Integer.MAX_VALUE, bs);
                }
                if (bs > 0 && blocks > 0) {
                    double[] slot = byRank.computeIfAbsent(rankOf(s, names), r -> new double[7]);
                    slot[3] = (double) bs * blocks;
                }
            }
        }
        if (byRank.isEmpty()) {
            throw new Refused("missing_metric", "no " + names.waiting() + " or " + names.running() + " series");
        }
        if (byRank.size() > MAX_RANKS) {
            throw new Refused("too_many_ranks", byRank.size() + " ranks (at most " + MAX_RANKS + ")");
        }
        List<LoadReport> reports = new ArrayList<>(byRank.size());
        List<String> labels = new ArrayList<>(byRank.size());
        int index = 0;
        for (Map.Entry<String, double[]> e : byRank.entrySet()) {
            double[] v = e.getValue();
            if (v[4] == 0 || v[5] == 0) {
                throw new Refused("missing_metric", "rank '" + e.getKey() + "' lacks "
                        + (v[4] == 0 ? names.waiting() : names.running()));
            }
            long capacity = (long) Math.min(Long.MAX_VALUE / 2, v[3]);
            double usage = Math.max(0, Math.min(1, v[2]));
            long tokens = capacity > 0 ? Math.round(usage * capacity) : 0;
            reports.add(new LoadReport(seq, toInt(v[1]), toInt(v[0]), tokens, capacity, index, false, 0, 0, 0, 0, 0));
            labels.add(e.getKey());
            index++;
        }
        return new Reading(List.copyOf(reports), List.copyOf(labels), blockSize);
    }

    private static void accumulate(List<PrometheusTextParser.Sample> series, EngineMetricNames names,
            TreeMap<String, double[]> byRank, int slot, int seenSlot) throws Refused {
        if (series == null) {
            return;
        }
        for (PrometheusTextParser.Sample s : series) {
            double v = s.value();
            if (Double.isNaN(v) || v < 0 || Double.isInfinite(v)) {
                throw new Refused("bad_value", s.name() + " = " + v);
            }
            double[] acc = byRank.computeIfAbsent(rankOf(s, names), r -> new double[7]);
            acc[slot] += v;
            if (seenSlot >= 0) {
                acc[seenSlot] = 1;
            }
        }
    }

    private static String rankOf(PrometheusTextParser.Sample s, EngineMetricNames names) {
        if (names.rankLabel().isEmpty()) {
            return "0";
        }
        String r = s.labels().get(names.rankLabel());
        return r == null ? "0" : r;
    }

    private static long label(PrometheusTextParser.Sample s, String name) {
        String v = name.isEmpty() ? null : s.labels().get(name);
        if (v == null) {
            return 0;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return 0; // vLLM prints None while the block count is unknown
        }
    }

    private static int toInt(double v) {
        return v >= Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) Math.round(v);
    }

    /** Numeric ranks in numeric order, then other values in string order. */
    private static int compareRank(String a, String b) {
        boolean na = isDigits(a);
        boolean nb = isDigits(b);
        if (na && nb) {
            int c = Integer.compare(a.length(), b.length());
            return c != 0 ? c : a.compareTo(b);
        }
        if (na != nb) {
            return na ? -1 : 1;
        }
        return a.compareTo(b);
    }

    private static boolean isDigits(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
