package io.kvroute.router.plugin;

import io.kvroute.router.config.LoadSourceConfig;
import io.kvroute.router.load.EngineMetricNames;
import io.kvroute.router.load.LoadEndpoints;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.load.MetricsScraper;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.List;

/**
 * Feeds each worker's load into the load plane from where {@code --load-source} says: its advertised
 * LoadStat endpoints, one per dp rank (auto, loadstat), learned from its {@code /server_info}
 * {@code kv_events} block or given by an operator through the admin API; else its {@code /metrics}
 * (auto, metrics) once its engine type is known ({@code --engine-type} or discovered), since that
 * decides the metric names. {@code none} feeds nothing.
 *
 * <p>Called from registry listeners and the router's start on any thread; the plane and the scraper
 * are thread-safe and this class keeps no state of its own.
 */
final class LoadFeeds {

    private final LoadSourceConfig config;
    private final LoadPlane loads;
    private final MetricsScraper scraper;

    LoadFeeds(LoadSourceConfig config, LoadPlane loads, MetricsScraper scraper) {
        this.config = config;
        this.loads = loads;
        this.scraper = scraper;
    }

    /** Starts (or moves) the feed of {@code worker}'s load; again on update, when its advert may have changed. */
    void subscribe(Worker worker) {
        String mode = config.loadSource();
        if (mode.equals("none")) {
            return;
        }
        boolean loadStat = !worker.loadEndpoints().isEmpty() && !mode.equals("metrics");
        if (!loadStat) {
            EngineType engine = EngineType.parse(config.engineType());
            engine = engine != null ? engine : worker.engine();
            if (!mode.equals("loadstat") && engine != null) {
                scraper.addWorker(worker.id(), worker.url(), metricNames(engine));
            }
            return;
        }
        if (scraper.isScraping(worker.id())) {
            scraper.removeWorker(worker.id()); // auto: the worker advertised LoadStat after all
        }
        String host = worker.host();
        List<String> endpoints = new ArrayList<>();
        for (String advertised : worker.loadEndpoints()) {
            endpoints.add(LoadEndpoints.connectable(advertised, host));
        }
        String topic = worker.kvEvents() == null ? "load" : worker.kvEvents().loadTopic();
        loads.addWorker(worker.id(), endpoints, endpoints.size(), topic);
    }

    /** Stops every feed of a removed worker. */
    void forget(String workerId) {
        scraper.removeWorker(workerId);
        loads.removeWorker(workerId);
    }

    private EngineMetricNames metricNames(EngineType engine) {
        EngineMetricNames names = EngineMetricNames.forEngine(engine.label());
        if (config.waitingName() != null) {
            names = names.withWaiting(config.waitingName());
        }
        if (config.runningName() != null) {
            names = names.withRunning(config.runningName());
        }
        if (config.kvUsageName() != null) {
            names = names.withKvUsage(config.kvUsageName());
        }
        return names;
    }
}
