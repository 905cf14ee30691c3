package io.kvroute.router.dispatch;

import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request's class as the engine's own {@code priority} field, when the router runs with
 * {@code --qos-engine-priority}: the router's queue decides who is admitted, and this decides who the
 * engine serves first among what it holds (a request admitted at the router can otherwise wait on its
 * worker behind prefill the router admitted earlier).
 *
 * <p>{@code levelsAboveDefault} is the class's distance from {@code default} (batch -1, interactive 1,
 * system 2). Engines read the field in opposite senses: vLLM serves lower values first
 * ({@code vllm/v1/core/sched/request_queue.py}) and answers 400 for a non-zero value unless it runs
 * {@code --scheduling-policy priority}; SGLang serves higher values first
 * ({@code srt/managers/schedule_policy.py}, {@code priority_sign}) under
 * {@code --enable-priority-scheduling} and otherwise ignores the field. TensorRT-LLM gets none. The
 * default class sends no field, so requests outside any class (and engines' default 0) rank alike.
 *
 * <p>The field is written into the outgoing bytes right after the opening brace, per attempt,
 * since the worker (and so the sense) may change on a retry; the client's own {@code priority} was
 * dropped at ingress (a client never sets the engine's priority while tenants are on).
 *
 * <p>A vLLM engine without priority scheduling answers such a request 400. That is the router's
 * doing, never the client's: {@link Dispatch} holds a 400 from an attempt that carried the field and
 * asks the same worker again without it; when that succeeds the worker joins
 * {@code refusingWorkerIds} (shared by every request of the router, logged once) and gets no field
 * from then on. A 400 to the second ask is the client's own and is relayed.
 *
 * @param levelsAboveDefault the class's levels above {@code default}; not 0
 * @param refusingWorkerIds workers that refused the field, shared and concurrent
 */
public record EnginePriority(int levelsAboveDefault, Set<String> refusingWorkerIds) {

    private static final Logger LOG = LoggerFactory.getLogger(EnginePriority.class);

    public EnginePriority {
        Objects.requireNonNull(refusingWorkerIds, "refusingWorkerIds");
    }

    /** {@code body} with the field for {@code worker}, or {@code body} itself when it gets none. */
    public byte[] applyTo(byte[] body, Worker worker) {
        return refusingWorkerIds.contains(worker.id()) ? body : applyTo(body, worker.engine());
    }

    /** The worker served the request once the field was left out: it runs without priority scheduling. */
    void refusedBy(Worker worker) {
        if (refusingWorkerIds.add(worker.id())) {
            LOG.warn("worker {} ({}) refused the engine priority field (400) and served the request without it: it "
                    + "runs without priority scheduling, so its requests get no priority from now on (start vLLM with "
                    + "--scheduling-policy priority, or turn --qos-engine-priority off)", worker.url(), worker.engine());
        }
    }

    /** The value for a worker of {@code engine}, or empty when it gets no field. */
    public OptionalInt valueFor(EngineType engine) {
        if (levelsAboveDefault == 0 || engine == null) {
            return OptionalInt.empty();
        }
        return switch (engine) {
            case VLLM -> OptionalInt.of(-levelsAboveDefault);
            case SGLANG -> OptionalInt.of(levelsAboveDefault);
            case TRTLLM -> OptionalInt.empty();
        };
    }

    /** {@code body} with the field for {@code engine}, or {@code body} itself when it gets none. */
    public byte[] applyTo(byte[] body, EngineType engine) {
        OptionalInt value = valueFor(engine);
        return value.isPresent() ? withPriority(body, value.getAsInt()) : body;
    }

    /**
     * A JSON object's bytes with {@code "priority":value} as its first member. The body is the
     * router's own output or a validated client object without a {@code priority} member.
     */
    static byte[] withPriority(byte[] body, int value) {
        int open = 0;
        while (open < body.length && body[open] != '{') {
            open++;
        }
        if (open == body.length) {
            throw new IllegalArgumentException("not a JSON object");
        }
        int next = open + 1;
        while (next < body.length && isJsonWhitespace(body[next])) {
            next++;
        }
        boolean empty = next < body.length && body[next] == '}';
        byte[] member = ("\"priority\":" + value + (empty ? "" : ",")).getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[body.length + member.length];
        System.arraycopy(body, 0, out, 0, open + 1);
        System.arraycopy(member, 0, out, open + 1, member.length);
        System.arraycopy(body, open + 1, out, open + 1 + member.length, body.length - open - 1);
        return out;
    }

    private static boolean isJsonWhitespace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }
}
