package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.List;
import java.util.Objects;

/**
 * A generated workload: requests with send times in <em>simulated</em> nanoseconds (the scenario
 * divides them by its time scale before sending) and a one-paragraph description for the report.
 */
public record Workload(List<ScheduledRequest> requests, String description) {

    public Workload {
        requests = List.copyOf(requests);
        Objects.requireNonNull(description, "description");
    }
}
