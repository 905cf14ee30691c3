package io.kvroute.mock.http;

/** What tests may know about the mock's output: the text of an output token id. */
public final class MockWorkerHandlerTestAccess {

    private MockWorkerHandlerTestAccess() {}

    public static String tokenText(int tokenId) {
        return StandInTokenizer.text(tokenId);
    }
}
