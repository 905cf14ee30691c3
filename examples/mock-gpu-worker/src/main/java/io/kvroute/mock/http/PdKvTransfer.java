package io.kvroute.mock.http;

import static io.kvroute.mock.http.Replies.JSON;
import static io.kvroute.mock.http.Replies.error;
import static io.kvroute.mock.http.Replies.json;

import io.kvroute.mock.pd.KvBudget;
import io.kvroute.mock.pd.KvRendezvous;
import io.kvroute.mock.pd.PdOptions;
import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The PD endpoints' state and KV hand-off, as SGLang's disaggregation does it between a prefill and a
 * decode engine: the prefill side answers {@code GET /kv/ROOM} once that room's prefill is done
 * (after a simulated transfer time); the decode side long-polls every room of a request on the
 * prefill worker's bootstrap port before it starts decoding, within the decode KV budget. Also keeps,
 * per client {@code rid}, how many tokens earlier continuation segments produced, so a continuation
 * continues the same output sequence. Thread-safe.
 */
final class PdKvTransfer {

    private final PdOptions pd;
    private final KvRendezvous rendezvous;
    private final KvBudget kvBudget;
    private final HttpClient kvClient;
    private final ScheduledExecutorService timers;
    private final double speedup;
    private final AtomicInteger pendingKvTransfers = new AtomicInteger();
    /** Decode role: tokens already generated per client rid, so continuation segments continue the sequence. */
    private final Map<String, Integer> generatedByRid = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
                    return size() > 10_000;
                }
            });
    /** Output text per client rid (last 256), for tests that check segment reassembly. */
    private final Map<String, String> outputByRid = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, false) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                    return size() > 256;
                }
            });

    PdKvTransfer(PdOptions pd, long kvCapacityTokens, HttpClient kvClient, double speedup) {
        this.pd = Objects.requireNonNull(pd, "pd");
        this.timers = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mock-pd-timers");
            t.setDaemon(true);
            return t;
        });
        this.rendezvous = new KvRendezvous(timers);
        this.kvBudget = new KvBudget(kvCapacityTokens);
        this.kvClient = kvClient;
        this.speedup = speedup;
    }

    PdOptions pd() {
        return pd;
    }

    KvBudget kvBudget() {
        return kvBudget;
    }

    KvRendezvous rendezvous() {
        return rendezvous;
    }

    int pendingKvTransfers() {
        return pendingKvTransfers.get();
    }

    String outputFor(String rid) {
        return outputByRid.get(rid);
    }

    void shutdown() {
        timers.shutdownNow();
    }

    /** Decode role: where a segment's output ids start (a first segment starts the rid afresh). */
    int continuationOffset(String clientRid, int segmentIndex) {
        if (clientRid == null) {
            return 0;
        }
        if (segmentIndex == 0) {
            generatedByRid.remove(clientRid);
            outputByRid.remove(clientRid);
            return 0;
        }
        return generatedByRid.getOrDefault(clientRid, 0);
    }

    /** Records a finished segment's text, and on a decode worker where the next continuation resumes. */
    void recordOutput(String clientRid, String text, boolean capacityEnd, int nextOffset) {
        outputByRid.merge(clientRid, text, String::concat);
        if (pd.decode()) {
            if (capacityEnd) {
                generatedByRid.put(clientRid, nextOffset);
            } else {
                generatedByRid.remove(clientRid);
            }
        }
    }

    /** Decode side: long-polls every room's KV on the prefill worker's bootstrap port; counts as pending meanwhile. */
    void fetchKv(String host, int port, List<Long> rooms, BiConsumer<Integer, Throwable> done) {
        pendingKvTransfers.incrementAndGet();
        BiConsumer<Integer, Throwable> finished = (tokens, failure) -> {
            pendingKvTransfers.decrementAndGet();
            done.accept(tokens, failure);
        };
        if (kvClient == null) {
            finished.accept(null, new IllegalStateException("no KV client configured"));
            return;
        }
        AtomicInteger pending = new AtomicInteger(rooms.size());
        AtomicBoolean failed = new AtomicBoolean();
        AtomicInteger tokens = new AtomicInteger();
        for (long room : rooms) {
            kvClient.newRequest("http://" + host + ":" + port + "/kv/" + room)
                    .timeout(pd.kvTransferTimeoutMillis(), TimeUnit.MILLISECONDS)
                    .send(new BufferingResponseListener() {
                        @Override
                        public void onComplete(Result result) {
                            Throwable failure = result.getFailure();
                            if (failure == null && result.getResponse().getStatus() != 200) {
                                failure = new IllegalStateException("prefill answered " + result.getResponse().getStatus()
                                        + ": " + getContentAsString());
                            }
                            if (failure != null) {
                                if (failed.compareAndSet(false, true)) {
                                    Throwable cause = failure;
                                    for (Throwable t = failure; t != null; t = t.getCause()) {
                                        if (t instanceof TimeoutException) {
                                            cause = t;
                                        }
                                    }
                                    finished.accept(null, cause);
                                }
                                return;
                            }
                            try {
                                tokens.accumulateAndGet(JSON.readTree(getContent()).path("tokens").asInt(), Math::max);
                            } catch (IOException e) {
                                // the token count is informational
                            }
                            if (pending.decrementAndGet() == 0 && !failed.get()) {
                                finished.accept(tokens.get(), null);
                            }
                        }
                    });
        }
    }

    /** Prefill side: answers a decode worker's KV request once the room's prefill is done. */
    void serveKv(String roomText, Response response, Callback callback) {
        long room;
        try {
            room = Long.parseLong(roomText);
        } catch (NumberFormatException e) {
            error(response, callback, 400, "invalid_request_error", "bad room '" + roomText + "'");
            return;
        }
        rendezvous.room(room).orTimeout(pd.kvTransferTimeoutMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((tokens, failure) -> {
                    if (failure != null) {
                        boolean timeout = failure instanceof TimeoutException;
                        error(response, callback, timeout ? 504 : 410, "kv_unavailable",
                                timeout ? "no prefill joined room " + room : "prefill for room " + room + " failed");
                        return;
                    }
                    long transferNanos = (long) (pd.kvTransferMsPer1k() * tokens / 1000.0 * 1_000_000 / speedup);
                    timers.schedule(() -> json(response, callback, 200, "{\"room\":" + room + ",\"tokens\":" + tokens + "}"),
                            transferNanos, TimeUnit.NANOSECONDS);
                });
    }
}
