package io.kvroute.router.http;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.load.LoadPlane;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.trace.RequestTracer;
import io.kvroute.router.worker.Breakers;
import io.kvroute.router.worker.HealthChecker;
import io.kvroute.router.worker.InFlightCounters;
import io.kvroute.router.worker.WorkerRegistry;

/**
 * What the Jetty handler ({@link RouterHandler}) and its admin API ({@code AdminRoutes}) read besides the
 * front door, built once per router by the composition root. All thread-safe.
 *
 * @param registry the fleet: {@code /v1/loads}, the admin worker list, add, remove and drain
 * @param inFlight router-local in-flight counts shown by {@code /v1/loads} and the admin API
 * @param breakers breaker states shown by the admin API; a removed worker's breaker is forgotten
 * @param health probed at once when the admin API adds a worker
 * @param loads the engine-reported loads {@code /v1/loads} shows
 * @param tracer the ingress span of every request the handler serves
 */
public record RouterContext(
        RouterConfig config,
        WorkerRegistry registry,
        InFlightCounters inFlight,
        Breakers breakers,
        HealthChecker health,
        RouterMetrics metrics,
        LoadPlane loads,
        RequestTracer tracer) {}
