package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.LoadSourceConfig;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.load.LoadPlaneConfig;
import io.kvroute.router.load.MetricsScraper;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.eclipse.jetty.client.HttpClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Where {@code --load-source} takes a worker's load from: its advertised LoadStat endpoints, else its
 * {@code /metrics} once the engine type is known. Nothing is started: the scraper's target list and
 * the plane's queued commands are what subscribing changes.
 */
class LoadFeedsTest {

    private static final String URL = "http://127.0.0.1:1";

    private final LoadPlane plane = new LoadPlane(LoadPlaneConfig.defaults(), () -> 0L, new SimpleMeterRegistry());
    private final MetricsScraper scraper = new MetricsScraper(plane, new HttpClient(), 1_000, 500, 8_000, () -> 0L,
            new SimpleMeterRegistry());

    @AfterEach
    void close() {
        scraper.close();
        plane.close();
    }

    private LoadFeeds feeds(String... flags) {
        String[] args = new String[flags.length + 2];
        args[0] = "--worker-urls";
        args[1] = URL;
        System.arraycopy(flags, 0, args, 2, flags.length);
        LoadSourceConfig config = RouterOptions.parse(args).loadSource();
        return new LoadFeeds(config, plane, scraper);
    }

    private static Worker worker(List<String> loadEndpoints, EngineType engine) {
        return new Worker("w1", URL, WorkerRole.REGULAR, null, null, loadEndpoints, null, engine);
    }

    @Test
    void auto_scrapesMetrics_onceTheEngineTypeIsKnown() {
        LoadFeeds feeds = feeds();
        feeds.subscribe(worker(List.of(), null));
        assertThat(scraper.isScraping("w1")).as("engine unknown: no metric names to read").isFalse();
        feeds.subscribe(worker(List.of(), EngineType.VLLM));
        assertThat(scraper.isScraping("w1")).isTrue();
    }

    @Test
    void engineTypeFlag_standsInForADiscoveredEngine() {
        feeds("--engine-type", "sglang").subscribe(worker(List.of(), null));
        assertThat(scraper.isScraping("w1")).isTrue();
    }

    @Test
    void auto_workerThatAdvertisesLoadStatLater_stopsBeingScraped() {
        LoadFeeds feeds = feeds();
        feeds.subscribe(worker(List.of(), EngineType.VLLM));
        assertThat(scraper.isScraping("w1")).isTrue();
        feeds.subscribe(worker(List.of("tcp://127.0.0.1:5557"), EngineType.VLLM));
        assertThat(scraper.isScraping("w1")).isFalse();
    }

    @Test
    void metricsMode_scrapesEvenAnAdvertisingWorker() {
        feeds("--load-source", "metrics").subscribe(worker(List.of("tcp://127.0.0.1:5557"), EngineType.VLLM));
        assertThat(scraper.isScraping("w1")).isTrue();
    }

    @Test
    void loadstatAndNone_neverScrape() {
        feeds("--load-source", "loadstat").subscribe(worker(List.of(), EngineType.VLLM));
        feeds("--load-source", "none").subscribe(worker(List.of(), EngineType.VLLM));
        assertThat(scraper.isScraping("w1")).isFalse();
    }

    @Test
    void forget_stopsTheScrape() {
        LoadFeeds feeds = feeds();
        feeds.subscribe(worker(List.of(), EngineType.VLLM));
        feeds.forget("w1");
        assertThat(scraper.isScraping("w1")).isFalse();
    }
}
