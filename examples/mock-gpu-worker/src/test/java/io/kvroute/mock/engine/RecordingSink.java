package io.kvroute.mock.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/** Records one request's events with the fake time they arrived at. */
final class RecordingSink implements TokenSink {

    private final FakeClock clock;
    final List<Integer> tokens = new ArrayList<>();
    /** Fake-clock time of each token. */
    final List<Double> tokenMillis = new ArrayList<>();
    final List<String> events = new ArrayList<>();
    final CountDownLatch ended = new CountDownLatch(1);
    double firstTokenMillis = -1;
    Integer cachedTokens;
    String finishReason;
    Usage usage;
    int errorStatus;
    double errorMillis = -1;
    String errorType;

    RecordingSink(FakeClock clock) {
        this.clock = clock;
    }

    @Override
    public void onPrefillDone(int cachedTokens) {
        events.add("prefillDone");
        this.cachedTokens = cachedTokens;
    }

    @Override
    public void onToken(int tokenId) {
        if (tokens.isEmpty()) {
            firstTokenMillis = clock.millis();
            events.add("firstToken");
        }
        tokens.add(tokenId);
        tokenMillis.add(clock.millis());
    }

    @Override
    public void onFinish(String finishReason, Usage usage) {
        events.add("finish");
        this.finishReason = finishReason;
        this.usage = usage;
        ended.countDown();
    }

    @Override
    public void onError(int httpStatus, String errorType, String message) {
        events.add("error");
        this.errorStatus = httpStatus;
        this.errorMillis = clock.millis();
        this.errorType = errorType;
        ended.countDown();
    }

    boolean done() {
        return ended.getCount() == 0;
    }
}
