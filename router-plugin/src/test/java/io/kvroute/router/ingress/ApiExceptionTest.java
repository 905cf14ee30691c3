package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** An error whose message starts with a quoted field path is about that field: OpenAI's {@code param}. */
class ApiExceptionTest {

    @Test
    void leadingQuotedPath_isTheParam() {
        assertThat(new ApiException(400, "'max_tokens' must be at least 1").param).isEqualTo("max_tokens");
        assertThat(new ApiException(400, "'messages[2].content' must be a string").param).isEqualTo("messages[2].content");
    }

    @Test
    void otherMessages_haveNoParam() {
        assertThat(new ApiException(400, "invalid JSON body: empty").param).isNull();
        assertThat(new ApiException(400, "one of 'text' or 'input_ids' is required").param).isNull();
        assertThat(new ApiException(400, "''").param).isNull();
        assertThat(new ApiException(400, "'unterminated").param).isNull();
        assertThat(new ApiException(400, null).param).isNull();
    }
}
