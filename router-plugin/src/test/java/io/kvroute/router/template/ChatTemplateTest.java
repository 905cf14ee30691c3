package io.kvroute.router.template;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.template.ChatTemplate.Compiled;
import io.kvroute.router.template.ChatTemplate.CompileResult;
import io.kvroute.router.template.ChatTemplate.Declined;
import io.kvroute.router.template.ChatTemplate.RenderResult;
import io.kvroute.router.template.ChatTemplate.Rendered;
import io.kvroute.router.template.ChatTemplate.Unsupported;
import io.kvroute.router.template.TemplateFailure.Kind;
import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Fail-closed compilation, the injected clock, limits and the transformers variable set. */
class ChatTemplateTest {

    private static final Instant NOW = Instant.parse("2026-03-07T21:05:09Z");

    private static Kind unsupported(String source) {
        CompileResult r = ChatTemplate.compile(source);
        assertThat(r).as(source).isInstanceOf(Unsupported.class);
        return ((Unsupported) r).reason();
    }

    private static RenderResult render(String source, Map<String, ?> vars) {
        CompileResult r = ChatTemplate.compile(source);
        assertThat(r).as(source).isInstanceOf(Compiled.class);
        return ((Compiled) r).template().render(vars, NOW);
    }

    private static String text(String source, Map<String, ?> vars) {
        RenderResult r = render(source, vars);
        assertThat(r).as(source).isInstanceOf(Rendered.class);
        return ((Rendered) r).text();
    }

    @Test
    void compile_refusesUnknownFilterTagTestMethodAndGlobal() {
        assertThat(unsupported("{{ x | wordwrap }}")).isEqualTo(Kind.UNSUPPORTED_FILTER);
        assertThat(unsupported("{% include 'other.jinja' %}")).isEqualTo(Kind.UNSUPPORTED_TAG);
        assertThat(unsupported("{% raw %}{{ x }}{% endraw %}")).isEqualTo(Kind.UNSUPPORTED_TAG);
        assertThat(unsupported("{% for x in l recursive %}{% endfor %}")).isEqualTo(Kind.UNSUPPORTED_TAG);
        assertThat(unsupported("{{ x is prime }}")).isEqualTo(Kind.UNSUPPORTED_TEST);
        assertThat(unsupported("{{ 'a{}'.format(1) }}")).isEqualTo(Kind.UNSUPPORTED_METHOD);
        assertThat(unsupported("{{ lipsum(2) }}")).isEqualTo(Kind.UNSUPPORTED_SYNTAX);
        assertThat(unsupported("{{ f(*args) }}")).isEqualTo(Kind.UNSUPPORTED_SYNTAX);
        // calling a variable: jinja2 would raise at render time (not callable); refused up front here
        assertThat(unsupported("{% set x = 1 %}{{ x(1) }}")).isEqualTo(Kind.UNSUPPORTED_SYNTAX);
    }

    @Test
    void compile_refusesInvalidJinja() {
        assertThat(unsupported("{% if x %}never closed")).isEqualTo(Kind.SYNTAX);
        assertThat(unsupported("{{ 'unterminated }}")).isEqualTo(Kind.SYNTAX);
        assertThat(unsupported("{% endfor %}")).isEqualTo(Kind.SYNTAX);
        assertThat(unsupported("{% break %}")).isEqualTo(Kind.SYNTAX);
        assertThat(unsupported("{{ x is defined if true else 3 }}")).isEqualTo(Kind.SYNTAX);
    }

    @Test
    void render_declinesAMacroCalledAboveItsDefinition_asJinja2Raises() {
        assertThat(render("{{ later(1) }}{% macro later(a) %}<{{ a }}>{% endmacro %}", Map.of()))
                .isInstanceOfSatisfying(Declined.class, d -> assertThat(d.reason()).isEqualTo(Kind.UNDEFINED));
    }

    @Test
    void strftimeNow_formatsTheInjectedInstantInUtc() {
        assertThat(text("{{ strftime_now('%Y-%m-%d %H:%M:%S %b %B %a %A %d %-d %I%p %j %%') }}", Map.of()))
                .isEqualTo("2026-03-07 21:05:09 Mar March Sat Saturday 07 7 09PM 066 %");
        assertThat(render("{{ strftime_now('%Z') }}", Map.of())).isInstanceOfSatisfying(Declined.class,
                d -> assertThat(d.reason()).isEqualTo(Kind.UNSUPPORTED_VALUE));
    }

    @Test
    void render_declinesOutputBeyondTheLimit() {
        assertThat(render("{{ 'x' * 100000000 }}", Map.of())).isInstanceOfSatisfying(Declined.class,
                d -> assertThat(d.reason()).isEqualTo(Kind.LIMIT));
        assertThat(render("{% for i in range(1000000) %}{% endfor %}", Map.of()))
                .isInstanceOfSatisfying(Declined.class, d -> assertThat(d.reason()).isEqualTo(Kind.SECURITY));
    }

    @Test
    void render_declinesRaiseExceptionWithItsMessage() {
        assertThat(render("{{ raise_exception('roles must alternate') }}", Map.of()))
                .isEqualTo(new Declined(Kind.RAISE_EXCEPTION, "roles must alternate"));
    }

    @Test
    void variables_passToolsAndDocumentsAsNoneAndLetKwargsOverrideSpecialTokens() {
        Map<String, Object> vars = ChatTemplate.variables(List.of(Map.of("role", "user", "content", "hi")), null, true,
                Map.of("bos_token", "<s>", "eos_token", "</s>"), Map.of("eos_token", "<override>", "enable_thinking", false));
        assertThat(text("{{ tools is defined }} {{ tools is none }} {{ documents is none }} {{ bos_token }}"
                + "{{ eos_token }} {{ add_generation_prompt }} {{ enable_thinking }} {{ unk_token is defined }}"
                + " {{ messages[0].content }}", vars))
                .isEqualTo("True True True <s><override> True False False hi");
    }

    @Test
    void values_convertJavaNumbersAndRefuseIntegersBeyond64Bits() {
        assertThat(text("{{ a }} {{ b }} {{ c | tojson }}", Map.of("a", 3, "b", 2.5f, "c", List.of(1, 2.0))))
                .isEqualTo("3 2.5 [1, 2.0]");
        assertThat(render("{{ a }}", Map.of("a", BigInteger.TWO.pow(70)))).isInstanceOfSatisfying(Declined.class,
                d -> assertThat(d.reason()).isEqualTo(Kind.UNSUPPORTED_VALUE));
    }

    @Test
    void floatRepr_matchesPythonRepr() {
        assertThat(Py.floatRepr(1e-7)).isEqualTo("1e-07");
        assertThat(Py.floatRepr(1e16)).isEqualTo("1e+16");
        assertThat(Py.floatRepr(1e15)).isEqualTo("1000000000000000.0");
        assertThat(Py.floatRepr(0.0001)).isEqualTo("0.0001");
        assertThat(Py.floatRepr(123.456)).isEqualTo("123.456");
        assertThat(Py.floatRepr(2.0e-3)).isEqualTo("0.002");
        assertThat(Py.floatRepr(5e-324)).isEqualTo("5e-324");
        assertThat(Py.floatRepr(1.7976931348623157e308)).isEqualTo("1.7976931348623157e+308");
        assertThat(Py.floatRepr(-2.5)).isEqualTo("-2.5");
    }

    @Test
    void compiledTemplate_isReusableAcrossRendersWithoutSharedState() {
        ChatTemplate t = ((Compiled) ChatTemplate.compile(
                "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}"))
                .template();
        assertThat(t.render(Map.of("messages", List.of(1, 2, 3)), NOW)).isEqualTo(new Rendered("3"));
        assertThat(t.render(Map.of("messages", List.of(1)), NOW)).isEqualTo(new Rendered("1"));
    }
}
