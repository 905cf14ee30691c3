package io.kvroute.router.metrics;

import io.kvroute.router.tenant.PriorityClass;
import io.kvroute.router.tenant.QosGate;
import io.kvroute.router.tenant.QosListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * Per-tenant and per-class QoS metrics ({@code kvroute_qos_*}). Tenant labels are bounded: the first
 * {@code maxTenantLabels} tenants seen get their own label, every later one is {@code other}, so a
 * fleet with 10,000 tenants still exports a bounded series set. Thread-safe.
 */
public final class TenantMetrics implements QosListener {

    /** The label of the tenants past the limit. */
    public static final String OTHER = "other";

    private final MeterRegistry registry;
    private final int maxTenantLabels;
    private final ConcurrentHashMap<String, String> labels = new ConcurrentHashMap<>();
    /** For tests: runs when a tenant not yet labelled is seen while slots are left, before it claims one. */
    Runnable newTenantHook;
    /** Label slots claimed; never more than {@code maxTenantLabels}, and labels holds exactly the claimers. */
    private final AtomicInteger labelSlotsTaken = new AtomicInteger();
    private final MeterMemo<MeterMemo.Pair, Timer> waits;
    private final MeterMemo<MeterMemo.Pair, Counter> service;
    private final MeterMemo<MeterMemo.Pair, Counter> refunded;
    private final MeterMemo<MeterMemo.Triple, Counter> shed;
    private final MeterMemo<MeterMemo.Triple, Counter> preempted;
    private final MeterMemo<MeterMemo.Pair, Counter> promoted;
    private final MeterMemo<String, Counter> localityPicks;
    private final MeterMemo<MeterMemo.Pair, Counter> holderWaits;
    private final MeterMemo<MeterMemo.Pair, Gauge> queueDepths;
    /** The gate whose counts the queue depth gauges read; null until {@link #bindQueueDepth}. */
    private volatile QosGate queue;

    public TenantMetrics(MeterRegistry registry, int maxTenantLabels) {
        this.registry = registry;
        this.maxTenantLabels = maxTenantLabels;
        this.waits = new MeterMemo<>(k -> Timer.builder("kvroute_qos_queue_wait_seconds")
                .description("Time a request waited in the router-side queue before admission (0 when admitted on arrival)")
                .tags("tenant", k.first(), "class", k.second()).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(300)).register(registry));
        this.service = new MeterMemo<>(k -> Counter.builder("kvroute_qos_service_tokens")
                .description("Weighted tokens of service charged to a tenant (VTC: uncached input, cached input at 0.1, output)")
                .tags("tenant", k.first(), "class", k.second()).register(registry));
        this.refunded = new MeterMemo<>(k -> Counter.builder("kvroute_qos_service_refunded_tokens")
                .description("Weighted tokens refunded: cached input found at the first byte, requests ended before it, "
                        + "streamed output settled down to the final usage")
                .tags("tenant", k.first(), "class", k.second()).register(registry));
        this.shed = new MeterMemo<>(k -> Counter.builder("kvroute_qos_shed_total")
                .description("Requests refused by QoS: queue_full, queue_timeout, no_worker, rate_limit_requests, rate_limit_tokens")
                .tags("tenant", k.first(), "class", k.second(), "reason", k.third()).register(registry));
        this.preempted = new MeterMemo<>(k -> Counter.builder("kvroute_qos_preempted_total")
                .description("Requests preempted before their first byte; reason by_<class>: the higher class whose arriving request took their place")
                .tags("tenant", k.first(), "class", k.second(), "reason", k.third()).register(registry));
        this.promoted = new MeterMemo<>(k -> Counter.builder("kvroute_qos_starvation_promotions_total")
                .description("Requests admitted by starvation promotion (using capacity held back for higher classes)")
                .tags("tenant", k.first(), "class", k.second()).register(registry));
        this.queueDepths = new MeterMemo<>(k -> Gauge.builder("kvroute_qos_queue_depth", queueDepth(k.first(), k.second()))
                .description("Requests waiting in the router-side queue")
                .tags("tenant", k.first(), "class", k.second()).register(registry));
        this.localityPicks = new MeterMemo<>(c -> Counter.builder("kvroute_qos_locality_picks_total")
                .description("Picks inside the fairness slack that served a cached prefix instead of the minimum counter")
                .tags("class", c).register(registry));
        this.holderWaits = new MeterMemo<>(k -> Counter.builder("kvroute_qos_holder_waits_total")
                .description("Requests that waited for their prefix holder under per-worker capacity, by outcome: "
                        + "holder (admitted there), bound_passed (admitted elsewhere), gone (refused or client left)")
                .tags("class", k.first(), "outcome", k.second()).register(registry));
    }

    /**
     * The label for {@code tenant}: its name while fewer than the limit are labelled, else {@value #OTHER}.
     *
     * <p>The bound holds exactly under concurrent first sightings: a new tenant claims one of the
     * {@code maxTenantLabels} slots by compare-and-set inside {@code computeIfAbsent} (atomic per tenant, so a tenant
     * claims at most once) and is stored only when it got one. A size check before the put would let every thread
     * that passed it in the same instant add its tenant. A labelled tenant costs one lock-free map read, and so does
     * one past the limit; in the instant the last slot is being claimed for a tenant, an event of that same tenant on
     * another thread may still be counted under {@value #OTHER}.
     */
    public String label(String tenant) {
        if (tenant.equals(OTHER)) {
            return OTHER; // a trusted header may name a tenant "other": it is counted with the rest
        }
        String known = labels.get(tenant);
        if (known != null) {
            return known;
        }
        if (labelSlotsTaken.get() >= maxTenantLabels) {
            return OTHER; // full: no map write for the tenants past the limit
        }
        Runnable hook = newTenantHook;
        if (hook != null) {
            hook.run();
        }
        String labelled = labels.computeIfAbsent(tenant, t -> claimLabelSlot() ? t : null);
        return labelled != null ? labelled : OTHER;
    }

    private boolean claimLabelSlot() {
        for (int taken = labelSlotsTaken.get(); taken < maxTenantLabels; taken = labelSlotsTaken.get()) {
            if (labelSlotsTaken.compareAndSet(taken, taken + 1)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Registers the refusal, preemption, promotion and locality series of every class at zero (tenant
     * {@value #OTHER}), so dashboards and alerts see a 0 instead of no data until the first event.
     */
    public void registerSeriesAtZero() {
        for (PriorityClass c : PriorityClass.values()) {
            for (String reason : new String[] {"queue_full", "queue_timeout", "no_worker", "rate_limit_requests",
                    "rate_limit_tokens"}) {
                shed.get(new MeterMemo.Triple(OTHER, c.label(), reason));
            }
            for (PriorityClass by : PriorityClass.values()) {
                if (by.above(c)) {
                    preempted.get(new MeterMemo.Triple(OTHER, c.label(), preemptedReason(by)));
                }
            }
            promoted.get(new MeterMemo.Pair(OTHER, c.label()));
            localityPicks.get(c.label());
            for (String outcome : new String[] {QosListener.HOLDER_WAIT_ON_HOLDER, QosListener.HOLDER_WAIT_BOUND_PASSED,
                    QosListener.HOLDER_WAIT_GONE}) {
                holderWaits.get(new MeterMemo.Pair(c.label(), outcome));
            }
        }
    }

    /**
     * {@code kvroute_qos_queue_depth{tenant, class}}: requests waiting at the router, read from the counts
     * {@code gate} keeps. A tenant's series appears when one of its requests first waits in that class ({@link #waiting});
     * {@value #OTHER} of every class is registered now. A labelled tenant's gauge is one lookup under the gate's lock;
     * {@value #OTHER}'s is the class's count less the labelled tenants' (at most {@code maxTenantLabels} lookups under
     * one lock), so a scrape never walks the queue.
     */
    public void bindQueueDepth(QosGate gate) {
        this.queue = gate;
        for (PriorityClass c : PriorityClass.values()) {
            queueDepths.get(new MeterMemo.Pair(OTHER, c.label()));
        }
        for (String tenant : labels.keySet()) {
            for (PriorityClass c : PriorityClass.values()) {
                queueDepths.get(new MeterMemo.Pair(tenant, c.label()));
            }
        }
    }

    private Supplier<Number> queueDepth(String label, String classLabel) {
        PriorityClass c = PriorityClass.parse(classLabel);
        if (label.equals(OTHER)) {
            return () -> queue.queuedExcept(c, labels.keySet());
        }
        return () -> queue.queued(c, label);
    }

    /** {@code kvroute_qos_locality_slack_tokens}: the configured slack Δ. */
    public void bindSlack(double slackTokens) {
        Gauge.builder("kvroute_qos_locality_slack_tokens", () -> slackTokens)
                .description("The fairness slack within which locality picks (weighted tokens per unit of weight)")
                .register(registry);
    }

    /**
     * {@code kvroute_qos_engine_priority_refusing_workers}: workers that answered 400 to the engine priority
     * field and served the request without it (vLLM without priority scheduling); they get no field since.
     */
    public void bindEnginePriorityRefusals(java.util.function.IntSupplier workers) {
        Gauge.builder("kvroute_qos_engine_priority_refusing_workers", workers::getAsInt)
                .description("Workers that refused the engine priority field (400) and get none since (--qos-engine-priority)")
                .register(registry);
    }

    /** {@code kvroute_qos_tenants_file_reload_failures_total} and reloads, read from the watcher. */
    public void bindReloads(DoubleSupplier reloads, DoubleSupplier failures) {
        io.micrometer.core.instrument.FunctionCounter.builder("kvroute_qos_tenants_file_reloads_total", reloads,
                r -> r.getAsDouble()).description("Tenants file reloads published").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("kvroute_qos_tenants_file_reload_failures_total", failures,
                f -> f.getAsDouble()).description("Tenants file edits rejected (the previous tenants stay)").register(registry);
    }

    @Override
    public void admitted(String tenant, PriorityClass c, long waitNanos, boolean wasPromoted) {
        String t = label(tenant);
        waits.get(new MeterMemo.Pair(t, c.label())).record(waitNanos, TimeUnit.NANOSECONDS);
        if (wasPromoted) {
            promoted.get(new MeterMemo.Pair(t, c.label())).increment();
        }
    }

    @Override
    public void waiting(String tenant, PriorityClass c) {
        if (queue != null) {
            queueDepths.get(new MeterMemo.Pair(label(tenant), c.label()));
        }
    }

    @Override
    public void shed(String tenant, PriorityClass c, String reason) {
        shed.get(new MeterMemo.Triple(label(tenant), c.label(), reason)).increment();
    }

    @Override
    public void preempted(String tenant, PriorityClass c, PriorityClass by) {
        preempted.get(new MeterMemo.Triple(label(tenant), c.label(), preemptedReason(by))).increment();
    }

    /**
     * The {@code reason} of {@code kvroute_qos_preempted_total}: {@code by_} and the class of the arriving request
     * that took the victim's place. The gate preempts in one way only (an arrival of a class that may preempt, before
     * the victim's first byte), so the preempting class is what tells preemptions apart; at most one value per class.
     */
    static String preemptedReason(PriorityClass by) {
        return "by_" + by.label();
    }

    @Override
    public void service(String tenant, PriorityClass c, double weightedTokens) {
        MeterMemo.Pair key = new MeterMemo.Pair(label(tenant), c.label());
        if (weightedTokens >= 0) {
            service.get(key).increment(weightedTokens);
        } else {
            refunded.get(key).increment(-weightedTokens);
        }
    }

    @Override
    public void localityPick(PriorityClass c) {
        localityPicks.get(c.label()).increment();
    }

    @Override
    public void holderWait(PriorityClass c, String outcome) {
        holderWaits.get(new MeterMemo.Pair(c.label(), outcome)).increment();
    }
}
