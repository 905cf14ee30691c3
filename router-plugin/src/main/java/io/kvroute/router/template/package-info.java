/**
 * A renderer for Hugging Face chat templates with Python jinja2's semantics, byte-identical to
 * transformers' {@code apply_chat_template}; plain Java, no I/O.
 *
 * <p>Start with {@link io.kvroute.router.template.ChatTemplate}: {@code compile} once per template
 * (lexer, then parser to an immutable tree; anything outside the implemented subset is a typed
 * "unsupported" result), then {@code render} per request (a typed "declined" result wherever jinja2
 * would raise). Internals: {@code Lexer} (whitespace control, trim/lstrip blocks), {@code Parser}
 * (jinja2 precedence), {@code Evaluator} (scoping, loops, macros), {@code Py} (Python values, str/repr,
 * equality, strip/split), {@code Access}, {@code Operators}, {@code Filters}, {@code Methods},
 * {@code Json}. The golden test in this package's tests compares every render with transformers'
 * output for five real templates; docs/tokenization.md describes the renderer.
 */
package io.kvroute.router.template;
