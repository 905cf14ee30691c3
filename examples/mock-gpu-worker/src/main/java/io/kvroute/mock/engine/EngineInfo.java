package io.kvroute.mock.engine;

/** Static facts an engine advertises in /server_info. */
public record EngineInfo(
        long maxTotalNumTokens,
        int maxRunningRequests,
        int pageSize,
        String prefillQueueStrategy,
        String engineLoop) {}
