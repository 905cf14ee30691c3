package io.kvroute.bench.report;

import io.kvroute.bench.stats.LatencySummary;
import io.kvroute.bench.stats.VariantMetrics;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * PNG plots rendered headless with JFreeChart. NaN values (no sample) are left out of the chart.
 * Stateless; sets {@code java.awt.headless=true} before any AWT class loads.
 */
public final class Charts {

    static {
        System.setProperty("java.awt.headless", "true");
    }

    private static final int WIDTH_PX = 900;
    private static final int HEIGHT_PX = 500;

    private Charts() {}

    /** One x/y point of a line series. */
    public record Point(double x, double y) {}

    /**
     * Bar chart of TTFT p50 and p95 per variant, one bar group per variant, one bar per
     * (class, percentile) when {@code byClass}, else for all requests.
     */
    public static void ttftBars(Path file, String title, Map<String, VariantMetrics> metricsByVariant, boolean byClass)
            throws IOException {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        metricsByVariant.forEach((variant, m) -> {
            if (byClass && !m.classes().isEmpty()) {
                m.classes().forEach((cls, s) -> addTtft(data, cls + " ", variant, s));
            } else {
                addTtft(data, "", variant, m.all());
            }
        });
        JFreeChart chart = ChartFactory.createBarChart(title, "variant", "TTFT (simulated ms)", data,
                PlotOrientation.VERTICAL, true, false, false);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH_PX, HEIGHT_PX);
    }

    private static void addTtft(DefaultCategoryDataset data, String prefix, String variant, LatencySummary s) {
        if (!Double.isNaN(s.ttftP50Ms())) {
            data.addValue(s.ttftP50Ms(), prefix + "p50", variant);
        }
        if (!Double.isNaN(s.ttftP95Ms())) {
            data.addValue(s.ttftP95Ms(), prefix + "p95", variant);
        }
    }

    /** Line chart of named series (e.g. per saturation step: TTFT p95 against offered rate). */
    public static void lines(Path file, String title, String xLabel, String yLabel, Map<String, List<Point>> series)
            throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        series.forEach((name, points) -> {
            XYSeries s = new XYSeries(name, false, true);
            for (Point p : points) {
                if (!Double.isNaN(p.x()) && !Double.isNaN(p.y())) {
                    s.add(p.x(), p.y());
                }
            }
            data.addSeries(s);
        });
        JFreeChart chart = ChartFactory.createXYLineChart(title, xLabel, yLabel, data,
                PlotOrientation.VERTICAL, true, false, false);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH_PX, HEIGHT_PX);
    }
}
