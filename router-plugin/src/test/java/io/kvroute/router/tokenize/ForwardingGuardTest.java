package io.kvroute.router.tokenize;

import static io.kvroute.router.tokenize.ForwardingGuard.Outcome.FORWARD;
import static io.kvroute.router.tokenize.ForwardingGuard.Outcome.INELIGIBLE;
import static io.kvroute.router.tokenize.ForwardingGuard.Outcome.INELIGIBLE_MULTIMODAL;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class ForwardingGuardTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHAT = "'messages':[{'role':'system','content':'S'},{'role':'user','content':'Q1'},"
            + "{'role':'assistant','content':'A1'},{'role':'user','content':'Q2'}]";

    private static JsonNode body(String json) {
        try {
            return JSON.readTree(json.replace('\'', '"'));
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static ForwardingGuard.Outcome check(String json) {
        return ForwardingGuard.check(body(json));
    }

    @Test
    void plainMultiTurnChatIsForwarded() {
        assertThat(check("{'model':'m','stream':true,'max_tokens':5," + CHAT + "}")).isEqualTo(FORWARD);
    }

    @Test
    void nullValuedOptionalFieldsCountAsAbsent() {
        assertThat(check("{'tools':null,'chat_template_kwargs':null," + CHAT + "}")).isEqualTo(FORWARD);
    }

    @Test
    void callerSuppliedInputIdsBlock() {
        assertThat(check("{'input_ids':[1,2,3]," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_INPUT_IDS);
    }

    @Test
    void missingOrEmptyMessagesBlock() {
        assertThat(check("{'prompt':'hello'}")).isEqualTo(INELIGIBLE);
        assertThat(check("{'messages':'hello'}")).isEqualTo(INELIGIBLE);
        assertThat(check("{'messages':[]}")).isEqualTo(INELIGIBLE);
    }

    @Test
    void toolsBlock() {
        assertThat(check("{'tools':[{'type':'function','function':{'name':'f'}}]," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TOOLS);
    }

    @Test
    void functionsBlock() {
        assertThat(check("{'functions':[{'name':'f'}]," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TOOLS);
    }

    @Test
    void toolRoleBlocks() {
        assertThat(check("{'messages':[{'role':'user','content':'Q'},{'role':'assistant','content':'A'},"
                + "{'role':'tool','content':'42'}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TOOLS);
    }

    @Test
    void assistantToolCallsBlock() {
        assertThat(check("{'messages':[{'role':'user','content':'Q'},{'role':'assistant','content':'',"
                + "'tool_calls':[{'id':'1','type':'function','function':{'name':'f','arguments':'{}'}}]},"
                + "{'role':'user','content':'Q2'}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TOOLS);
    }

    @Test
    void legacyFunctionCallBlocks() {
        assertThat(check("{'messages':[{'role':'user','content':'Q'},{'role':'assistant','content':'',"
                + "'function_call':{'name':'f','arguments':'{}'}},{'role':'user','content':'Q2'}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TOOLS);
    }

    @Test
    void multimodalContentPartsBlockAsMultimodal() {
        assertThat(check("{'messages':[{'role':'user','content':[{'type':'text','text':'what is this'},"
                + "{'type':'image_url','image_url':{'url':'data:image/png;base64,AAAA'}}]}]}")).isEqualTo(INELIGIBLE_MULTIMODAL);
    }

    @Test
    void multimodalWinsOverOtherBlockingReasons() {
        assertThat(check("{'tools':[{'type':'function'}],'messages':[{'role':'user','content':[{'type':'text','text':'x'}]}]}"))
                .isEqualTo(INELIGIBLE_MULTIMODAL);
    }

    @Test
    void nullOrMissingContentBlocks() {
        assertThat(check("{'messages':[{'role':'user','content':null}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_CONTENT);
        assertThat(check("{'messages':[{'role':'user'}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_CONTENT);
        assertThat(check("{'messages':[{'role':'user','content':42}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_CONTENT);
    }

    @Test
    void reasoningContentInHistoryBlocks() {
        assertThat(check("{'messages':[{'role':'user','content':'Q'},{'role':'assistant','content':'A',"
                + "'reasoning_content':'R'},{'role':'user','content':'Q2'}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_CONTENT);
    }

    @Test
    void nonLeadingSystemMessageBlocks() {
        assertThat(check("{'messages':[{'role':'user','content':'Q'},{'role':'system','content':'S'},"
                + "{'role':'user','content':'Q2'}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_ROLE);
    }

    @Test
    void twoConsecutiveUserMessagesBlock() {
        assertThat(check("{'messages':[{'role':'user','content':'Q1'},{'role':'user','content':'Q2'}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_ROLE);
    }

    @Test
    void customChatTemplateBlocks() {
        assertThat(check("{'chat_template':'{{ messages }}'," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TEMPLATE_OVERRIDE);
    }

    @Test
    void chatTemplateKwargsBlock() {
        assertThat(check("{'chat_template_kwargs':{'enable_thinking':false}," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TEMPLATE_OVERRIDE);
    }

    @Test
    void reasoningBlocks() {
        assertThat(check("{'reasoning':{'effort':'low'}," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TEMPLATE_OVERRIDE);
    }

    @Test
    void reasoningEffortBlocks() {
        assertThat(check("{'reasoning_effort':'high'," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TEMPLATE_OVERRIDE);
    }

    @Test
    void taskBlocks() {
        assertThat(check("{'task':'classify'," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TEMPLATE_OVERRIDE);
    }

    @Test
    void continueFinalMessageBlocks() {
        assertThat(check("{'continue_final_message':true," + CHAT + "}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_CONTINUE_FINAL_MESSAGE);
        assertThat(check("{'continue_final_message':false," + CHAT + "}")).isEqualTo(FORWARD);
    }

    @Test
    void trailingAssistantMessageBlocks() {
        assertThat(check("{'messages':[{'role':'user','content':'Q'},{'role':'assistant','content':'Partial'}]}"))
                .isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_TRAILING_ASSISTANT);
    }

    @Test
    void unknownRoleBlocks() {
        assertThat(check("{'messages':[{'role':'developer','content':'D'},{'role':'user','content':'Q'}]}")).isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_ROLE);
    }

    @Test
    void nonObjectBodyBlocks() {
        assertThat(ForwardingGuard.check(body("[1,2]"))).isEqualTo(INELIGIBLE);
        assertThat(ForwardingGuard.check(null)).isEqualTo(INELIGIBLE);
    }

    @Test
    void addGenerationPromptOtherThanTrueBlocks_withItsOwnLabel() {
        assertThat(check("{'add_generation_prompt':false," + CHAT + "}"))
                .isEqualTo(ForwardingGuard.Outcome.INELIGIBLE_GENERATION_PROMPT);
        assertThat(check("{'add_generation_prompt':true," + CHAT + "}")).isEqualTo(FORWARD);
    }

    @Test
    void everyRefusalHasItsOwnMetricLabel() {
        java.util.Set<String> labels = new java.util.HashSet<>();
        for (ForwardingGuard.Outcome o : ForwardingGuard.Outcome.values()) {
            assertThat(labels.add(o.label())).as(o.name()).isTrue();
        }
        assertThat(FORWARD.label()).isEqualTo("forwarded");
        assertThat(INELIGIBLE_MULTIMODAL.label()).isEqualTo("ineligible_multimodal");
    }
}
