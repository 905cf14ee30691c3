package io.kvroute.router.lora;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.config.LoraConfig;
import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * The router's LoRA rules, asked by the front door and the dispatch; transport-neutral.
 *
 * <ul>
 *   <li>{@link #resolve}: which adapter a request names. SGLang's {@code lora_path} names it with
 *       {@code model} the base; vLLM and OpenAI style name it in {@code model} itself: a name no worker serves
 *       as its base model but some worker lists as an adapter card, or (with dynamic loading) a catalogue
 *       name. Such a request is routed over the workers of the adapter's base model.</li>
 *   <li>{@link #candidates}: of the base model's workers, those that list the adapter (any other answers
 *       404, vLLM {@code vllm/entrypoints/openai/models/serving.py}); with dynamic loading and a catalogue
 *       path, all of them, since the router can load it where placement wants it. When no worker lists the
 *       adapter and it cannot be loaded either, the base pool stays (an engine that lists no adapter cards,
 *       as SGLang's {@code lora_path} allows, decides itself).</li>
 *   <li>{@link #prepare}: counts the decision by the chosen worker's adapter state, notes the dispatch in
 *       the {@link AdapterDirectory}, and, when the worker does not list the adapter and dynamic loading
 *       is on, loads it there first: one load per (worker, adapter) at a time ({@link LoadFlights}), bounded
 *       by {@code --lora-load-timeout-ms}. The router never unloads an adapter: the engine's own LRU frees
 *       slots of idle adapters, so nothing another request uses is taken away.</li>
 * </ul>
 * Thread-safe.
 */
public final class LoraRouting {

    /** What a request names: the model whose workers serve it and the adapter (null for the base model). */
    public record Resolved(String model, String adapter) {}

    private final AdapterDirectory directory;
    private final LoraConfig config;
    private final AdapterLoadClient loader;
    private final LoadFlights flights = new LoadFlights();
    private final LoraMeters meters;
    private final LongSupplier nanoClock;

    /** @param loader used only with {@link LoraConfig#dynamicLoading()}; may be null otherwise */
    public LoraRouting(AdapterDirectory directory, LoraConfig config, AdapterLoadClient loader, MeterRegistry registry,
            LongSupplier nanoClock) {
        this.directory = requireNonNull(directory, "directory");
        this.config = requireNonNull(config, "config");
        if (config.dynamicLoading()) {
            requireNonNull(loader, "loader");
        }
        this.loader = loader;
        this.meters = new LoraMeters(requireNonNull(registry, "registry"));
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
    }

    public AdapterDirectory directory() {
        return directory;
    }

    public LoraConfig config() {
        return config;
    }

    /**
     * @param model the {@code model} the request names (after the single-model default), or null
     * @param loraPath SGLang's {@code lora_path}, or null
     * @param baseModels the models workers serve as their base (configured or learned)
     */
    public Resolved resolve(String model, String loraPath, Set<String> baseModels) {
        if (loraPath != null) {
            return new Resolved(model, loraPath);
        }
        if (model == null || baseModels.contains(model)) {
            return new Resolved(model, null);
        }
        String base = directory.current().baseOf().get(model);
        if (base != null) {
            return new Resolved(base, model);
        }
        if (config.dynamicLoading() && config.catalogue().containsKey(model) && baseModels.size() == 1) {
            return new Resolved(baseModels.iterator().next(), model);
        }
        return new Resolved(model, null);
    }

    /** The workers of {@code basePool} a request for {@code adapter} may go to (see the class comment); may be empty. */
    public List<Worker> candidates(List<Worker> basePool, String adapter) {
        if (adapter == null) {
            return basePool;
        }
        if (canLoad(adapter)) {
            return basePool;
        }
        return listing(basePool, adapter);
    }

    /**
     * The workers of {@code basePool} that list {@code adapter}, without dynamic loading's widening: the PD path
     * (prefill and decode pools) loads no adapters. As {@link #candidates}, the whole pool when no worker anywhere
     * lists it (the engines decide).
     */
    public List<Worker> listing(List<Worker> basePool, String adapter) {
        if (adapter == null) {
            return basePool;
        }
        AdapterView view = directory.current();
        List<Worker> listing = new ArrayList<>(basePool.size());
        for (Worker w : basePool) {
            if (view.lists(w.id(), adapter)) {
                listing.add(w);
            }
        }
        if (listing.isEmpty() && !view.adapters().contains(adapter)) {
            return basePool; // nobody lists it: the engines decide (SGLang lora_path without cards)
        }
        // every worker lists it: the pool snapshot itself, so the policy's per-pool memo (CandidateIndex) holds
        return listing.size() == basePool.size() ? basePool : listing;
    }

    /**
     * Before a request for {@code adapter} is sent to {@code worker}: null when it can go at once, else the load
     * that must finish first (failing with {@link AdapterLoadClient.LoadFailed} or {@link TimeoutException}).
     */
    public CompletableFuture<Void> prepare(Worker worker, String adapter) {
        if (adapter == null) {
            return null;
        }
        AdapterView view = directory.current();
        boolean load = canLoad(adapter) && !view.lists(worker.id(), adapter);
        if (load) {
            meters.decision("loaded");
            directory.noteDispatch(worker.id(), adapter);
        } else {
            noteSent(worker, adapter, true);
        }
        if (!load) {
            return null;
        }
        String path = config.catalogue().get(adapter);
        String base = view.baseOf().getOrDefault(adapter, worker.modelId());
        return flights.join(worker.id(), adapter, () -> {
            // This request's flight is registered now. A load that finished after the check above has noted
            // the adapter before leaving the table (noteLoaded runs first), so look again rather than load twice.
            if (directory.current().lists(worker.id(), adapter)) {
                return CompletableFuture.completedFuture(null);
            }
            long started = nanoClock.getAsLong();
            return loader.load(worker, adapter, path, config.loadTimeoutMs()).whenComplete((ok, failure) -> {
                Throwable cause = unwrap(failure);
                meters.load(cause == null ? "ok" : cause instanceof TimeoutException ? "timeout" : "failed",
                        nanoClock.getAsLong() - started);
                if (cause == null) {
                    directory.noteLoaded(worker.id(), adapter, base);
                }
            });
        });
    }

    /**
     * A request for {@code adapter} goes to {@code worker} with no load: the router's recent-dispatch list notes it,
     * and {@code counted} requests add to {@code kvroute_lora_decisions_total} by the worker's state (the PD path
     * counts its prefill pick only, one decision per request).
     */
    public void noteSent(Worker worker, String adapter, boolean counted) {
        if (adapter == null) {
            return;
        }
        if (counted) {
            meters.decision(AdapterAffinity.outcome(AdapterAffinity.score(directory.current(), worker.id(), adapter)));
        }
        directory.noteDispatch(worker.id(), adapter);
    }

    private boolean canLoad(String adapter) {
        return config.dynamicLoading() && config.catalogue().containsKey(adapter);
    }

    /** The cause inside a {@link java.util.concurrent.CompletionException}, or the failure itself. */
    public static Throwable unwrap(Throwable failure) {
        Throwable t = failure;
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
