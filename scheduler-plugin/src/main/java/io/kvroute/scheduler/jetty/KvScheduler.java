package io.kvroute.scheduler.jetty;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.scheduler.engine.SchedulerEngine;
import io.kvroute.scheduler.report.LoadPublisher;
import io.kvroute.protocol.LoadStat;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The scheduler plugin as a Jetty component. It owns the {@link LoadPublisher} (bound on start,
 * closed on stop) and feeds it the attached engine's load after every engine step and on an idle
 * tick; it serves {@code /scheduler} (strategy, budgets, queue, counters, busy, load) and the
 * SGLang-shaped {@code kv_events} advert of {@code /server_info}, to which a KV-event publisher adds
 * its endpoint with {@link #registerKvEvents}.
 *
 * <p>Threading: the engine and the advert are volatile references; publishing is serialized by a
 * lock held only around {@link LoadPublisher#onStep}, which never blocks.
 */
public final class KvScheduler extends ContainerLifeCycle {

    private static final Logger LOG = LoggerFactory.getLogger(KvScheduler.class);

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> WILDCARD_HOSTS = List.of("*", "0.0.0.0", "::", "[::]");

    private final SchedulerConfig config;
    private final Scheduler ticker = new ScheduledExecutorScheduler("kvroute-scheduler-load-tick", true);
    private final Object publishLock = new Object();
    private volatile SchedulerEngine engine;
    private volatile KvEventsAdvert kvEvents;
    private volatile LoadPublisher publisher;

    private KvScheduler(SchedulerConfig config) {
        this.config = requireNonNull(config, "config");
        addBean(ticker);
    }

    /** A scheduler component, not started; start it or add it to a server as a bean. */
    public static KvScheduler create(SchedulerConfig config) {
        return new KvScheduler(config);
    }

    /**
     * Mounts in front of the server's handlers (which keep serving every other path) and follows the
     * server's lifecycle. An engine running in this server attaches with {@link #attach}, finding the
     * component with {@link #of(Server)}.
     */
    public static KvScheduler mount(Server server, SchedulerConfig config) {
        KvScheduler scheduler = create(config);
        Handler existing = server.getHandler();
        Handler.Sequence sequence = new Handler.Sequence();
        sequence.addHandler(scheduler.handler());
        if (existing != null) {
            sequence.addHandler(existing);
        }
        server.setHandler(sequence);
        server.addBean(scheduler);
        return scheduler;
    }

    /** The jetty-home module's entry point: {@code kvroute.scheduler.*} properties, see {@link SchedulerConfig#fromProperties}. */
    public static KvScheduler mount(Server server, Map<String, String> properties) {
        return mount(server, SchedulerConfig.fromProperties(properties));
    }

    /** The scheduler mounted in {@code server}, if any. */
    public static Optional<KvScheduler> of(Server server) {
        return Optional.ofNullable(server.getBean(KvScheduler.class));
    }

    /** Attaches the engine whose load is published and shown; one engine per component. */
    public void attach(SchedulerEngine engine) {
        requireNonNull(engine, "engine");
        synchronized (publishLock) {
            if (this.engine != null) {
                throw new IllegalStateException("an engine is already attached");
            }
            this.engine = engine;
        }
        engine.addStepListener(this::publish);
    }

    /** Adds the KV-event publisher's endpoint to the advert (SGLang's {@code endpoint_*} fields). */
    public void registerKvEvents(KvEventsAdvert advert) {
        this.kvEvents = requireNonNull(advert, "advert");
    }

    /** The bound load endpoints, index = rank; empty when not publishing or not started. */
    public List<String> loadEndpoints() {
        LoadPublisher p = publisher;
        return p == null ? List.of() : p.endpoints();
    }

    /**
     * SGLang's {@code kv_events} block ({@code describe_kv_events_publisher} in sgl-project/sglang
     * {@code python/sglang/srt/server_args.py}), or null when the engine publishes neither load
     * reports nor KV events. Keys in this order: {@code publisher}, {@code endpoint_host},
     * {@code block_size} (the KV-event publisher's, else the engine's; absent when unknown),
     * {@code dp_size}, the KV-event range ({@code endpoint_port_base}, {@code topic},
     * {@code replay_endpoint_port_base}) once a publisher registered, the load range
     * ({@code load_endpoint_port_base}, {@code load_topic}) while publishing. Rank r is on base + r.
     */
    public Map<String, Object> kvEventsBlock() {
        KvEventsAdvert events = kvEvents;
        List<String> load = loadEndpoints();
        if (events == null && load.isEmpty()) {
            return null;
        }
        Map<String, Object> block = new LinkedHashMap<>();
        block.put("publisher", "zmq");
        URI loadUri = load.isEmpty() ? null : tcpUri(load.get(0));
        String host = events != null ? events.host() : loadUri != null ? loadUri.getHost() : null;
        if (host != null) {
            block.put("endpoint_host", WILDCARD_HOSTS.contains(host) ? "*" : host);
        }
        SchedulerEngine e = engine;
        int blockSize = events != null ? events.blockSize() : e != null ? e.blockSizeTokens() : 0;
        if (blockSize > 0) {
            block.put("block_size", blockSize);
        }
        block.put("dp_size", Math.max(1, load.size()));
        if (events != null) {
            block.put("endpoint_port_base", events.portBase());
            block.put("topic", events.topic());
            if (events.replayPortBase() > 0) {
                block.put("replay_endpoint_port_base", events.replayPortBase());
            }
        }
        if (loadUri != null) {
            block.put("load_endpoint_port_base", loadUri.getPort());
            block.put("load_topic", "load");
        }
        return block;
    }

    /**
     * What this component contributes to {@code /server_info}: the {@code kv_events} block (JSON
     * null when nothing is published, as SGLang sends it) and {@code dp_size}. The older top-level
     * {@code load_endpoints} list is not sent: routers discover the load range from the block.
     */
    public Map<String, Object> serverInfo() {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("kv_events", kvEventsBlock());
        info.put("dp_size", Math.max(1, loadEndpoints().size()));
        return info;
    }

    /** The {@code /scheduler} document: the engine's view, then busy, load and the publisher's endpoints. */
    public Map<String, Object> status() {
        SchedulerEngine e = engine;
        Map<String, Object> out = new LinkedHashMap<>();
        if (e == null) {
            out.put("engine", null);
        } else {
            out.putAll(e.view());
            LoadStat load = e.load();
            out.put("busy", SchedulerEngine.busy(load));
            out.put("load", describe(load));
        }
        Map<String, Object> publishing = new LinkedHashMap<>();
        LoadPublisher p = publisher;
        publishing.put("endpoints", loadEndpoints());
        publishing.put("sent_reports", p == null ? 0 : p.sentCount());
        publishing.put("send_errors", p == null ? 0 : p.sendErrorCount());
        out.put("load_publisher", publishing);
        out.put("kv_events", kvEventsBlock());
        return out;
    }

    /** Serves {@code GET /scheduler} and, when configured, {@code GET /server_info}; declines the rest. */
    public Handler handler() {
        return new Handler.Abstract.NonBlocking() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                if (!HttpMethod.GET.is(request.getMethod())) {
                    return false;
                }
                String path = Request.getPathInContext(request);
                Map<String, Object> body;
                if (path.equals("/scheduler")) {
                    body = status();
                } else if (config.serveServerInfo() && (path.equals("/server_info") || path.equals("/get_server_info"))) {
                    body = serverInfo();
                } else {
                    return false;
                }
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                response.write(true, ByteBuffer.wrap(toJson(body)), callback);
                return true;
            }
        };
    }

    @Override
    protected void doStart() throws Exception {
        if (config.publishesLoad()) {
            publisher = LoadPublisher.bind(config.loadEndpoint(), 1);
        }
        super.doStart();
        scheduleTick();
    }

    @Override
    protected void doStop() throws Exception {
        super.doStop(); // stops the ticker first
        LoadPublisher p = publisher;
        if (p != null) {
            synchronized (publishLock) {
                publisher = null;
            }
            p.close();
        }
    }

    private void scheduleTick() {
        if (!isRunning() && !isStarting()) {
            return;
        }
        ticker.schedule(() -> {
            try {
                publish();
            } catch (RuntimeException e) {
                // An engine whose load() throws once (e.g. while it is still being wired at startup) must not end
                // load reporting for good: the next tick tries again.
                LOG.warn("engine load report failed; retrying on the next tick: {}", e.toString());
            } finally {
                scheduleTick();
            }
        }, config.idleReportMillis(), TimeUnit.MILLISECONDS);
    }

    private void publish() {
        SchedulerEngine e = engine;
        if (e == null || !e.isAlive()) {
            return; // a dead engine loop must not look fresh and idle: say nothing
        }
        LoadStat load = e.load();
        synchronized (publishLock) {
            LoadPublisher p = publisher;
            if (p != null) {
                p.onStep(load);
            }
        }
    }

    private static Map<String, Object> describe(LoadStat load) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("num_running_reqs", load.numRunningReqs());
        m.put("num_waiting_reqs", load.numWaitingReqs());
        m.put("num_tokens", load.numTokens());
        m.put("max_total_num_tokens", load.maxTotalNumTokens());
        LoadStat.Extension ext = load.ext();
        if (ext != null) {
            m.put("num_waiting_uncached_tokens", ext.numWaitingUncachedTokens());
            m.put("num_total_tokens", ext.numTotalTokens());
            m.put("max_running_requests", ext.maxRunningRequests());
            m.put("total_prefill_uncached_tokens", ext.totalPrefillUncachedTokens());
            m.put("total_prefill_busy_us", ext.totalPrefillBusyUs());
        }
        return m;
    }

    private static URI tcpUri(String endpoint) {
        return endpoint.startsWith("tcp://") ? URI.create(endpoint) : null;
    }

    private static byte[] toJson(Map<String, Object> body) {
        try {
            return JSON.writeValueAsString(body).getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("scheduler view is not JSON-serializable", e);
        }
    }
}
