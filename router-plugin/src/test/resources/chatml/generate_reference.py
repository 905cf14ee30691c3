#!/usr/bin/env python3
"""Renders reference ChatML strings with the REAL Qwen3 chat template, the way the engine does.

The environment mirrors HF transformers' `_compile_jinja_template` (transformers/utils/chat_template_utils.py):
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]),
a `raise_exception` global and a `tojson` filter that calls json.dumps(ensure_ascii=False, ...).
`render` gets messages, add_generation_prompt, the tokenizer's special tokens and enable_thinking,
as apply_chat_template(..., enable_thinking=X) passes it through as a template kwarg.

Usage (from this directory, needs only python3 + jinja2 >= 3.1):
    python3 generate_reference.py ../models/qwen3/tokenizer_config.json.gz > qwen3_reference.jsonl

The output is deterministic (fixed seed, sorted nothing, ensure_ascii=False), one JSON object per line:
{"messages": [...], "add_generation_prompt": bool, "enable_thinking": bool, "rendered": str}.
"""
import gzip
import json
import random
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def compile_template(source):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env.from_string(source)


ASCII_USER = [
    "Hello!", "What is the capital of France?", "Explain quicksort in two sentences.",
    "Write a haiku about routers.", "  leading and trailing spaces  ", "Line one\nLine two\n\nLine four",
    "Tabs\tand\tmore\ttabs", "Quote \"this\" and 'that'", "", "\n\nstarts with newlines",
    "ends with newlines\n\n", "Numbers 1234567890 and 3.14159", "Symbols: <|not_special|> <think> ~!@#$%^&*()",
]
CJK_USER = [
    "你好，请介绍一下你自己。", "日本の首都はどこですか？", "한국어로 대답해 주세요.",
    "请用中文解释一下 KV cache 是什么。", "混合 mixed 文本 text テキスト", "《红楼梦》的作者是谁？",
]
EMOJI_USER = [
    "Tell me a joke 😂", "🚀🚀🚀 launch status?", "Family: 👨‍👩‍👧‍👦 and flags 🇫🇷🇯🇵",
    "Skin tones 👍🏽👍🏿 ok?", "Math ∑∫√∞ and arrows ←→↑↓", "Zero\u200bwidth and combining e\u0301",
]
CODE_USER = [
    "```python\ndef fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n```\nWhat is the complexity?",
    "Fix this Java:\n```java\npublic static void main(String[] args) {\n\tSystem.out.println(\"hi\")\n}\n```",
    "{\"json\": [1, 2, {\"nested\": true}], \"s\": \"\\u00e9\"}",
    "SELECT * FROM users WHERE name LIKE '%o''reilly%';",
    "#include <stdio.h>\nint main(){printf(\"%d\\n\", 42);}\n",
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
    "<think>\nmulti\nline\n\nreasoning\n\n</think>\n\n\n\nAnswer after many newlines.",
    "Preamble before <think>\ninner\n</think>\nanswer",
    "no opening tag, only closing\n</think>\n\nanswer",
    "<think>\nfirst</think>middle</think>\nlast part",
    "<think>\n思考中文推理\n</think>\n\n中文答案。",
    "<think>\n\n\n</think>",
]
SYSTEM = [
    "You are a helpful assistant.", "你是一个乐于助人的助手。", "Answer in JSON only.",
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.", "",
]


def long_system(rng):
    words = ["policy", "routing", "cache", "prefix", "token", "worker", "latency", "budget", "队列", "模型"]
    lines = []
    for i in range(rng.randint(20, 60)):
        lines.append(f"{i + 1}. " + " ".join(rng.choice(words) for _ in range(rng.randint(5, 20))))
    return "You must follow these rules:\n" + "\n".join(lines)


def pick_user(rng):
    pool = rng.choice([ASCII_USER, CJK_USER, EMOJI_USER, CODE_USER])
    return rng.choice(pool)


def conversation(rng, kind):
    msgs = []
    if kind == "long_system" or rng.random() < 0.5:
        msgs.append({"role": "system", "content": long_system(rng) if kind == "long_system" else rng.choice(SYSTEM)})
    turns = 1 if kind == "single" else rng.randint(2, 6)
    for t in range(turns):
        msgs.append({"role": "user", "content": pick_user(rng)})
        last = t == turns - 1
        if not last or kind == "trailing_assistant":
            if kind in ("think", "trailing_assistant") and rng.random() < 0.7:
                msgs.append({"role": "assistant", "content": rng.choice(THINKING)})
            elif kind == "reasoning_field":
                msgs.append({"role": "assistant", "content": rng.choice(ASSISTANT),
                             "reasoning_content": rng.choice(["", "\nstep by step\n", "推理", None])})
            else:
                msgs.append({"role": "assistant", "content": rng.choice(ASSISTANT)})
    if kind == "mid_system":
        msgs.insert(rng.randint(1, len(msgs)), {"role": "system", "content": "Mid-conversation system note."})
    if kind == "tool_role":
        # Tool results after an assistant turn, and a user turn that looks like a tool response
        # (it does not count as the last query, which changes where reasoning is kept).
        msgs.append({"role": "assistant", "content": rng.choice(THINKING)})
        for _ in range(rng.randint(1, 3)):
            msgs.append({"role": "tool", "content": rng.choice(["{\"temp\": 21}", "result 42", "多行\n结果"])})
        if rng.random() < 0.5:
            msgs.append({"role": "user", "content": "<tool_response>\nfake\n</tool_response>"})
        if rng.random() < 0.5:
            msgs.append({"role": "assistant", "content": rng.choice(THINKING)})
    return msgs


KINDS = ["single", "multi", "think", "long_system", "mid_system", "trailing_assistant", "reasoning_field", "tool_role"]


def main():
    with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f:
        template = compile_template(json.load(f)["chat_template"])
    rng = random.Random(20261130)
    out = sys.stdout
    count = 0
    for i in range(240):
        kind = KINDS[i % len(KINDS)]
        msgs = conversation(rng, kind)
        agp = kind != "trailing_assistant" and rng.random() < 0.85
        thinking = rng.random() < 0.6
        rendered = template.render(messages=msgs, add_generation_prompt=agp, enable_thinking=thinking,
                                   bos_token=None, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   unk_token=None, tools=None, documents=None)
        out.write(json.dumps({"kind": kind, "messages": msgs, "add_generation_prompt": agp,
                              "enable_thinking": thinking, "rendered": rendered}, ensure_ascii=False) + "\n")
        count += 1
    print(f"wrote {count} conversations", file=sys.stderr)


if __name__ == "__main__":
    main()
