package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.policy.PromptExtras;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * What the probe reads of a request that vLLM folds into its block hashes (vLLM
 * {@code vllm/v1/core/kv_cache_utils.py} {@code generate_block_hash_extra_keys}): the {@code cache_salt}
 * string, a chat content part other than text, {@code prompt_embeds}; and the salts no engine takes.
 */
class BodyProbePromptExtrasTest {

    private static BodyProbe probe(String json) throws Exception {
        return BodyProbe.parse(json.replace('\'', '"').getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void cacheSaltString_isTheSalt_nullAbsentOrSglangsList_isNone() throws Exception {
        assertThat(probe("{'prompt':'p','cache_salt':'tenant-a'}").extras()).isEqualTo(new PromptExtras("tenant-a", null));
        assertThat(probe("{'prompt':'p'}").extras()).isSameAs(PromptExtras.NONE);
        assertThat(probe("{'prompt':'p','cache_salt':null}").extras()).isSameAs(PromptExtras.NONE);
        // SGLang's batch form: no salt vLLM would take (vLLM answers it with its own 400)
        assertThat(probe("{'prompt':['a','b'],'cache_salt':['s1','s2']}").extras()).isSameAs(PromptExtras.NONE);
        // the empty string: SGLang takes it, vLLM refuses it; it is forwarded, and hashes as no salt
        assertThat(probe("{'prompt':'p','cache_salt':''}").extras()).isEqualTo(new PromptExtras("", null));
    }

    @Test
    void cacheSaltNumberBooleanOrObject_isA400NamingTheField() {
        for (String salt : new String[] {"42", "true", "{'s':1}", "1e400", "'\\ud800x'"}) { // the last: a lone surrogate
            assertThatThrownBy(() -> probe("{'prompt':'p','cache_salt':" + salt + "}")).as(salt)
                    .isInstanceOfSatisfying(ApiException.class, e -> {
                        assertThat(e.status).isEqualTo(400);
                        assertThat(e.param).isEqualTo("cache_salt");
                    });
        }
    }

    @Test
    void nonTextContentPart_isMultimodal_textPartsAreNot() throws Exception {
        String image = "{'type':'image_url','image_url':{'url':'http://x/y.png'}}";
        assertThat(probe("{'messages':[{'role':'user','content':[{'type':'text','text':'a'}," + image + "]}],"
                + "'cache_salt':'s'}").extras()).isEqualTo(new PromptExtras("s", PromptExtras.MULTIMODAL));
        assertThat(probe("{'messages':[{'role':'user','content':[{'type':'input_audio','input_audio':{}}]}]}").unhashable)
                .isEqualTo(PromptExtras.MULTIMODAL);
        assertThat(probe("{'messages':[{'role':'user','content':[{'type':'text','text':'a'}]},"
                + "{'role':'assistant','content':'b'}]}").extras()).isSameAs(PromptExtras.NONE);
    }

    @Test
    void promptEmbeds_areUnhashable_andStandInForAPrompt_asVllmTakesThem() throws Exception {
        BodyProbe both = probe("{'prompt':'p','prompt_embeds':'AAAA'}");
        assertThat(both.unhashable).isEqualTo(PromptExtras.PROMPT_EMBEDS);
        BodyProbe embedsOnly = probe("{'prompt_embeds':['AAAA']}");
        Endpoint.COMPLETIONS.validate(embedsOnly); // vLLM validate_prompt_and_prompt_embeds: either one will do
        assertThat(probe("{'prompt':'p','prompt_embeds':null}").unhashable).isNull();
        assertThat(probe("{'prompt':'p','prompt_embeds':[]}").unhashable).as("an empty list is none in vLLM").isNull();
        assertThatThrownBy(() -> Endpoint.COMPLETIONS.validate(probe("{'prompt_embeds':[]}")))
                .isInstanceOf(ApiException.class).hasMessageContaining("'prompt'");
    }
}
