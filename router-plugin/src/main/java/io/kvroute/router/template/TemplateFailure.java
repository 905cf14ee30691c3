package io.kvroute.router.template;

import static java.util.Objects.requireNonNull;

/**
 * Why a template cannot be compiled ({@link Kind#isCompileTime}) or why one render failed. Each kind
 * is a stable, low-cardinality label (used as a metric label by callers); the message is for logs.
 *
 * <p>Compile-time kinds mean "this renderer does not reproduce the template", so the model must be
 * treated as text-only. Render-time kinds mean jinja2 would have raised too (or that this renderer
 * cannot prove its output equal), so the request must not forward ids.
 */
public final class TemplateFailure extends Exception {

    /** A failure category. */
    public enum Kind {
        /** The template source is not valid jinja2 (jinja2 raises TemplateSyntaxError too). */
        SYNTAX("syntax", true),
        /** A tag ({@code {% raw %}}, {@code include}, {@code call}, ...) this renderer does not implement. */
        UNSUPPORTED_TAG("unsupported_tag", true),
        UNSUPPORTED_FILTER("unsupported_filter", true),
        UNSUPPORTED_TEST("unsupported_test", true),
        UNSUPPORTED_METHOD("unsupported_method", true),
        /** A global function or syntax form outside the implemented subset. */
        UNSUPPORTED_SYNTAX("unsupported_syntax", true),
        /** The template called {@code raise_exception(msg)}. */
        RAISE_EXCEPTION("raise_exception", false),
        /** An operation Python would refuse: {@code 'a' + 1}, {@code len(None)}, division by zero. */
        TYPE_ERROR("type_error", false),
        /** An attribute or item of an undefined value (jinja2 UndefinedError). */
        UNDEFINED("undefined", false),
        /** A mutating method the immutable sandbox refuses (jinja2 SecurityError). */
        SECURITY("security", false),
        /** A value whose Python rendering this renderer does not reproduce (a method object, a huge int). */
        UNSUPPORTED_VALUE("unsupported_value", false),
        /** Output or a repetition exceeded {@link ChatTemplate#MAX_OUTPUT_CHARS}. */
        LIMIT("limit", false),
        /** A defect of this renderer (an unexpected runtime exception): declined, never forwarded. */
        INTERNAL("internal", false);

        private final String label;
        private final boolean compileTime;

        Kind(String label, boolean compileTime) {
            this.label = label;
            this.compileTime = compileTime;
        }

        public String label() {
            return label;
        }

        public boolean isCompileTime() {
            return compileTime;
        }
    }

    private final Kind kind;

    TemplateFailure(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = requireNonNull(kind, "kind");
    }

    public Kind kind() {
        return kind;
    }

    @Override
    public String toString() {
        return kind.label() + ": " + getMessage();
    }
}
