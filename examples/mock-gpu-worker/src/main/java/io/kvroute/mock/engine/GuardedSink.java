package io.kvroute.mock.engine;

/**
 * Keeps a throwing sink from killing the engine thread; the failure is reported, not rethrown.
 * Every sink the engine holds is wrapped in one at submit.
 */
record GuardedSink(TokenSink delegate) implements TokenSink {
    @Override
    public void onPrefillDone(int cachedTokens) {
        try {
            delegate.onPrefillDone(cachedTokens);
        } catch (RuntimeException ex) {
            report(ex);
        }
    }

    @Override
    public void onToken(int tokenId) {
        try {
            delegate.onToken(tokenId);
        } catch (RuntimeException ex) {
            report(ex);
        }
    }

    @Override
    public void onFinish(String finishReason, Usage usage) {
        try {
            delegate.onFinish(finishReason, usage);
        } catch (RuntimeException ex) {
            report(ex);
        }
    }

    @Override
    public void onError(int httpStatus, String errorType, String message) {
        try {
            delegate.onError(httpStatus, errorType, message);
        } catch (RuntimeException ex) {
            report(ex);
        }
    }

    private static void report(RuntimeException ex) {
        System.err.println("kvroute engine: token sink threw " + ex);
    }
}
