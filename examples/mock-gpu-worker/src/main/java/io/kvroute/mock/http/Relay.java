package io.kvroute.mock.http;

import static io.kvroute.mock.http.Replies.errorBody;
import static io.kvroute.mock.http.Replies.utf8;

import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.TokenIds;
import io.kvroute.mock.engine.TokenSink;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Relays one request's engine events ({@link TokenSink}) to its HTTP response: SSE chunks as tokens
 * come, or one JSON body at the end; errors before the first byte as a status and an OpenAI error
 * body, after it as an SSE error event and {@code [DONE]}. On a PD decode worker it also holds the
 * request's KV reservation one token at a time and ends the segment ("length", a continuation
 * follows) when the decode budget or the segment limit is reached; on a prefill worker it signals
 * the room's decode side. A client that goes away aborts the engine request. Serialized per
 * request (every callback is synchronized).
 */
final class Relay implements TokenSink {
    private final OutputFormatter format;
    private final boolean stream;
    private final boolean includeUsage;
    private final Response response;
    private final OrderedWriter writer;
    private final PromptEncoder encoder;
    private final PdKvTransfer transfer;
    private final int[] outputIds;
    private final StringBuilder text = new StringBuilder();
    private int count;
    private boolean started;
    private boolean capacityEnd;
    private boolean ended;
    private final String clientRid;
    private final int outputOffset;
    volatile Engine.Submission submission;
    Runnable onPrefilled;
    Consumer<String> onFailed;
    long reservedKv;
    int segmentLimit;

    Relay(OutputFormatter format, boolean stream, boolean includeUsage, int maxTokens, Response response, Callback callback,
            String clientRid, int outputOffset, PromptEncoder encoder, PdKvTransfer transfer, AtomicLong aborted) {
        this.clientRid = clientRid;
        this.outputOffset = outputOffset;
        this.format = format;
        this.stream = stream;
        this.includeUsage = includeUsage;
        this.response = response;
        this.encoder = encoder;
        this.transfer = transfer;
        this.outputIds = new int[maxTokens];
        this.writer = new OrderedWriter(response, callback, () -> {
            aborted.incrementAndGet();
            Engine.Submission s = submission;
            if (s != null) {
                s.abort();
            }
        });
    }

    @Override
    public synchronized void onPrefillDone(int cachedTokens) {
        if (onPrefilled != null) {
            onPrefilled.run();
            onPrefilled = null;
        }
    }

    @Override
    public synchronized void onToken(int engineTokenId) {
        if (ended) {
            return;
        }
        if (onPrefilled != null) {
            onPrefillDone(0);
        }
        if (reservedKv > 0 || segmentLimit > 0) {
            boolean segmentFull = segmentLimit > 0 && count >= segmentLimit;
            if (segmentFull || !transfer.kvBudget().tryReserve(1)) {
                capacityEnd = true;
                Engine.Submission s = submission;
                if (s != null) {
                    s.abort();
                }
                return;
            }
            reservedKv++;
        }
        // With a client rid, ids continue that request's sequence across PD continuation segments.
        int tokenId = clientRid == null ? engineTokenId : TokenIds.output(clientRid, outputOffset + count);
        String piece = encoder.decode(tokenId);
        if (count < outputIds.length) {
            outputIds[count] = tokenId;
        }
        count++;
        text.append(piece);
        if (stream) {
            startStream();
            writer.write(utf8(format.tokenEvent(tokenId, piece, text.toString(), count)), false);
        }
    }

    @Override
    public synchronized void onFinish(String finishReason, Usage usage) {
        if (ended) {
            return;
        }
        ended = true;
        releaseKv();
        if (onPrefilled != null) {
            if ("abort".equals(finishReason)) {
                if (onFailed != null) {
                    onFailed.accept("prefill aborted");
                }
            } else {
                onPrefillDone(0);
            }
        }
        if (clientRid != null) {
            transfer.recordOutput(clientRid, text.toString(), capacityEnd, outputOffset + count);
        }
        if (capacityEnd) {
            finishReason = "length";
            usage = new Usage(usage.promptTokens(), count, usage.cachedTokens());
        }
        if ("abort".equals(finishReason) && !stream && !started) {
            writer.write(utf8(errorBody(499, "aborted", "request aborted")), true);
            return;
        }
        if (stream) {
            startStream();
            writer.write(utf8(format.finishEvents(finishReason, usage, includeUsage, text.toString(), capacityEnd)), true);
        } else {
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            writer.write(utf8(format.complete(text.toString(), outputIds, Math.min(count, outputIds.length), finishReason,
                    usage, capacityEnd)), true);
        }
    }

    private void releaseKv() {
        if (reservedKv > 0) {
            transfer.kvBudget().release(reservedKv);
            reservedKv = 0;
        }
    }

    @Override
    public synchronized void onError(int httpStatus, String errorType, String message) {
        if (ended) {
            return;
        }
        ended = true;
        releaseKv();
        if (onFailed != null) {
            onFailed.accept(message);
            onFailed = null;
        }
        if (started) {
            writer.write(utf8("data: " + errorBody(httpStatus, errorType, message) + "\n\ndata: [DONE]\n\n"), true);
            return;
        }
        response.setStatus(httpStatus);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        if (httpStatus == 429) {
            response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
        }
        writer.write(utf8(errorBody(httpStatus, errorType, message)), true);
    }

    private void startStream() {
        if (!started) {
            started = true;
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
        }
    }
}
