#!/usr/bin/env python3
"""Golden completion-prompt token ids from the real Python stack.

An engine tokenizes a text prompt (OpenAI /v1/completions `prompt`, SGLang /generate `text`) with the
tokenizer's special tokens: SGLang's TokenizerManager._tokenize_texts calls `self.tokenizer(texts)`
(sglang python/sglang/srt/managers/tokenizer_manager.py; HF's default add_special_tokens=True), vLLM's
CompletionRequest.add_special_tokens defaults to True (vllm vllm/entrypoints/openai/completion/protocol.py).
For each model directory this writes a seeded corpus of completion prompts with
`AutoTokenizer.from_pretrained(dir)(prompt)["input_ids"]` (add_special_tokens left at its default, True),
and the ids without special tokens for comparison.

Environment (no torch needed):
    pip install transformers==5.17.0 tokenizers==0.23.2 jinja2==3.1.6

Usage, from the repository root, with the model directories of generate_goldens.py:
    python3 router-plugin/src/test/golden/generate_completion_goldens.py OUT_DIR MODEL=DIR [MODEL=DIR ...]

Writes OUT_DIR/<model>.completions.jsonl.gz (gzip -n style: no name, mtime 0), one JSON object per line:
    {"id": int, "prompt": str, "ids": [int, ...], "ids_no_special": [int, ...]}
plus "tokenizer_json_ids": [int, ...] when tokenizer.json itself (tokenizers.Tokenizer.from_file, special
tokens added) gives other ids than transformers (transformers 5 rebuilds DeepSeek V3's LlamaTokenizerFast,
see generate_goldens.py). Deterministic: one fixed seed per model name, ensure_ascii=False.
"""
import io
import json
import os
import random
import sys
import zlib

import tokenizers
import transformers
from transformers import AutoTokenizer

from generate_goldens import CJK, CODE, EDGE_WS, EMOJI, LOOKALIKES, PLAIN, write_gzip

PROMPTS_PER_MODEL = 100

# Prompts that are (nearly) empty, and ones that start or end with a model's own special-token text.
EMPTYISH = ["", " ", "\n", "\t", "  \n  ", "\u3000", "\ufeff", "\u200b"]
SPECIAL_TEXT = [
    "<|begin_of_text|>Hello", "<|begin_of_text|>", "<bos>Hello", "<bos>", "<｜begin▁of▁sentence｜>Hi",
    "Hello<|end_of_text|>", "Hello<eos>", "<|endoftext|>Hello", "<|im_start|>assistant\n",
]


def prompt(rng, i):
    kind = i % 10
    if kind == 0:
        return rng.choice(EMPTYISH)
    if kind == 1:
        return rng.choice(SPECIAL_TEXT)
    pool = {2: LOOKALIKES, 3: CJK, 4: EMOJI, 5: CODE}.get(kind, PLAIN)
    text = rng.choice(pool)
    if kind == 6:
        text = text + " " + rng.choice(CJK + EMOJI)
    if kind in (7, 8) or rng.random() < 0.3:
        text = rng.choice(EDGE_WS) + text
    if kind in (7, 9) or rng.random() < 0.3:
        text = text + rng.choice(EDGE_WS)
    return text


def main():
    out_dir = sys.argv[1]
    print(f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}", file=sys.stderr)
    for spec in sys.argv[2:]:
        model, directory = spec.split("=", 1)
        tok = AutoTokenizer.from_pretrained(directory)
        raw_tok = tokenizers.Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
        rng = random.Random(zlib.crc32(model.encode()) ^ 20261205)
        buf = io.StringIO()
        differ = diverged = 0
        for i in range(PROMPTS_PER_MODEL):
            text = prompt(rng, i)
            ids = list(tok(text)["input_ids"])
            plain = list(tok(text, add_special_tokens=False)["input_ids"])
            row = {"id": i, "prompt": text, "ids": ids, "ids_no_special": plain}
            raw_ids = list(raw_tok.encode(text, add_special_tokens=True).ids)
            if raw_ids != ids:
                row["tokenizer_json_ids"] = raw_ids
                diverged += 1
            differ += ids != plain
            buf.write(json.dumps(row, ensure_ascii=False) + "\n")
        path = f"{out_dir}/{model}.completions.jsonl.gz"
        write_gzip(path, buf.getvalue())
        print(f"{model} ({type(tok).__name__}): {PROMPTS_PER_MODEL} prompts, {differ} whose ids differ with and"
              f" without special tokens, {diverged} where transformers' ids differ from tokenizer.json's -> {path}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
