package io.kvroute.router.accesslog;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvroute.router.trace.TraceSpan;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringWriter;
import java.time.Instant;
import java.util.Objects;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.RequestLogWriter;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.NanoTime;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jetty's {@link RequestLog} for inference requests: one JSON object per line, written when the
 * response completed, from the request's {@link RouteFacts} and Jetty's own request/response
 * accounting (time stamp, status, bytes written, begin time).
 *
 * <p>Only requests that carry {@link RouteFacts} (the inference endpoints) are logged: probes and
 * scrapes would drown the log. Output goes to a {@link RequestLog.Writer}: Jetty's
 * {@link RequestLogWriter} for a file (appending, managed as a bean of this log), or standard output.
 * Jetty calls {@link #log} on the thread that completed the request; the writers synchronize.
 */
public final class AccessLog extends ContainerLifeCycle implements RequestLog {

    private static final Logger LOG = LoggerFactory.getLogger(AccessLog.class);
    private static final JsonFactory JSON = new JsonFactory();

    /** The request attribute holding a request's {@link RouteFacts}. */
    public static final String ATTRIBUTE = RouteFacts.class.getName();

    private final RequestLog.Writer writer;

    public AccessLog(RequestLog.Writer writer) {
        this.writer = Objects.requireNonNull(writer, "writer");
        addBean(writer);
    }

    /** {@code stdout}, or a file path appended to (the {@code --access-log} value). */
    public static AccessLog forTarget(String target) {
        if ("stdout".equals(target)) {
            return new AccessLog(new StreamWriter(System.out));
        }
        RequestLogWriter file = new RequestLogWriter(target);
        file.setAppend(true);
        file.setRetainDays(0);
        return new AccessLog(file);
    }

    /** Creates the facts of an inference request, with its ingress span, and attaches them to it. */
    public static RouteFacts attach(Request request, String endpoint, TraceSpan span) {
        RouteFacts facts = RouteFacts.of(endpoint, span);
        request.setAttribute(ATTRIBUTE, facts);
        return facts;
    }

    /** The facts attached to {@code request}, or detached ones when it has none. */
    public static RouteFacts factsOf(Request request) {
        return request.getAttribute(ATTRIBUTE) instanceof RouteFacts facts ? facts
                : RouteFacts.detached(Request.getPathInContext(request));
    }

    @Override
    public void log(Request request, Response response) {
        if (!(request.getAttribute(ATTRIBUTE) instanceof RouteFacts facts)) {
            return;
        }
        try {
            writer.write(line(facts, Request.getTimeStamp(request), response.getStatus(),
                    Response.getContentBytesWritten(response), NanoTime.since(request.getBeginNanoTime())));
        } catch (IOException | RuntimeException e) {
            LOG.warn("access log write failed", e);
        }
    }

    /** The JSON line (no trailing newline); absent facts are omitted, never written as null. */
    static String line(RouteFacts f, long timeStampMillis, int status, long bytes, long totalNanos) throws IOException {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("time", Instant.ofEpochMilli(timeStampMillis).toString());
            g.writeStringField("endpoint", f.endpoint());
            optional(g, "model", f.model());
            optional(g, "tenant", f.tenant());
            optional(g, "priority_class", f.priorityClass());
            if (f.queueWaitNanos() >= 0) {
                g.writeNumberField("queue_wait_ms", f.queueWaitNanos() / 1e6);
            }
            g.writeNumberField("status", status);
            g.writeNumberField("bytes", bytes);
            if (f.firstByteNanos() >= 0) {
                g.writeNumberField("ttft_ms", f.firstByteNanos() / 1e6);
            }
            g.writeNumberField("total_ms", totalNanos / 1e6);
            optional(g, "worker", f.worker());
            optional(g, "prefill_worker", f.prefillWorker());
            optional(g, "policy", f.policy());
            optional(g, "decision_reason", f.reason());
            if (f.matchedTokens() >= 0) {
                g.writeNumberField("matched_tokens", f.matchedTokens());
            }
            g.writeNumberField("retries", f.retries());
            if (f.segments() > 0) {
                g.writeNumberField("segments", f.segments());
            }
            optional(g, "trace_id", f.traceId());
            g.writeEndObject();
        }
        return out.toString();
    }

    private static void optional(JsonGenerator g, String name, String value) throws IOException {
        if (value != null) {
            g.writeStringField(name, value);
        }
    }

    /** One line per entry to a print stream (standard output). */
    static final class StreamWriter implements RequestLog.Writer {
        private final PrintStream out;

        StreamWriter(PrintStream out) {
            this.out = out;
        }

        @Override
        public void write(String requestEntry) {
            out.println(requestEntry); // PrintStream locks per call: lines never interleave
        }
    }
}
