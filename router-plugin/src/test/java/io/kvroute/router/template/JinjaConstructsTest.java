package io.kvroute.router.template;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.template.ChatTemplate.Compiled;
import io.kvroute.router.template.ChatTemplate.CompileResult;
import io.kvroute.router.template.ChatTemplate.Declined;
import io.kvroute.router.template.ChatTemplate.RenderResult;
import io.kvroute.router.template.ChatTemplate.Rendered;
import io.kvroute.router.template.TemplateFailure.Kind;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One test per jinja2 construct, with real jinja2 as the oracle: {@code golden/constructs.jsonl} holds
 * small templates rendered in transformers' own environment by {@code src/test/golden/generate_constructs.py}
 * (whitespace control, Python printing, operators, slices, string methods, filters, tests, loops, scoping,
 * namespace, macros, errors). Each must render byte-identical, or decline with the kind matching the
 * Python exception.
 */
class JinjaConstructsTest {

    /**
     * Python prints these as {@code <built-in method ...>}, {@code dict_items(...)}, {@code range(0, 3)},
     * {@code <function ...>}: declined.
     */
    private static final Set<String> DECLINED_BY_DESIGN = Set.of("print_method_object", "print_items_view",
            "print_reverse_iter", "range_print", "global_printed");

    record Case(String name, String template, Map<String, Object> vars, String out, String error) {
        @Override
        public String toString() {
            return name;
        }
    }

    @SuppressWarnings("unchecked")
    static Stream<Case> cases() throws IOException {
        ObjectMapper json = new ObjectMapper();
        List<Case> out = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                JinjaConstructsTest.class.getClassLoader().getResourceAsStream("golden/constructs.jsonl"),
                StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                Map<String, Object> row = json.readValue(line, Map.class);
                out.add(new Case((String) row.get("name"), (String) row.get("template"),
                        (Map<String, Object>) row.get("vars"), (String) row.get("out"), (String) row.get("error")));
            }
        }
        return out.stream();
    }

    static Kind kindOf(String pythonError) {
        String type = pythonError.substring(0, pythonError.indexOf(':'));
        return switch (type) {
            case "TemplateError" -> Kind.RAISE_EXCEPTION;
            case "UndefinedError" -> Kind.UNDEFINED;
            case "SecurityError" -> Kind.SECURITY;
            case "TypeError", "ZeroDivisionError", "TemplateRuntimeError", "ValueError" -> Kind.TYPE_ERROR;
            default -> throw new AssertionError("unmapped Python error " + pythonError);
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void construct_rendersAsJinja2(Case c) {
        CompileResult compiled = ChatTemplate.compile(c.template());
        assertThat(compiled).as("compiles").isInstanceOf(Compiled.class);
        RenderResult result = ((Compiled) compiled).template().render(c.vars(), Instant.EPOCH);
        if (DECLINED_BY_DESIGN.contains(c.name())) {
            assertThat(result).isInstanceOfSatisfying(Declined.class,
                    d -> assertThat(d.reason()).isEqualTo(Kind.UNSUPPORTED_VALUE));
        } else if (c.error() != null) {
            assertThat(result).as("Python raised %s", c.error()).isInstanceOfSatisfying(Declined.class,
                    d -> assertThat(d.reason()).as(d.message()).isEqualTo(kindOf(c.error())));
        } else {
            assertThat(result).isInstanceOf(Rendered.class);
            assertThat(((Rendered) result).text()).isEqualTo(c.out());
        }
    }
}
