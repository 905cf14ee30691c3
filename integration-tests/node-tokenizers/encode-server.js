// Bench only (the tokenize-speed scenario): HF tokenizers' Rust core through Node, timed in this process.
// Usage: node encode-server.js <tokenizer.json> <cases.json>; cases.json is [{"name": ..., "text": ...}, ...].
// Then one request per stdin line, {"case": i, "reps": n}; one reply per line,
// {"case": i, "ms": [n wall times of encode(text, addSpecialTokens=false)], "tokens": t, "hash": h}.
// The hash is the ids' 31-polynomial over int32, as the Java side computes it, to prove both arms agree.
'use strict';
const fs = require('fs');
const readline = require('readline');
const { Tokenizer } = require('tokenizers');

const tokenizer = Tokenizer.fromFile(process.argv[2]);
const cases = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));

function hash(ids) {
  let h = 0;
  for (const id of ids) {
    h = (Math.imul(h, 31) + id) | 0;
  }
  return h;
}

async function run(request) {
  const text = cases[request.case].text;
  const ms = [];
  let ids = null;
  for (let i = 0; i < request.reps; i++) {
    const start = process.hrtime.bigint();
    const encoding = await tokenizer.encode(text, null, { addSpecialTokens: false });
    ids = encoding.getIds();
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { case: request.case, ms, tokens: ids ? ids.length : 0, hash: ids ? hash(ids) : 0 };
}

const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(async () => {
    const reply = await run(JSON.parse(line));
    process.stdout.write(JSON.stringify(reply) + '\n');
  });
});
process.stdout.write(JSON.stringify({ ready: true, version: require('tokenizers/package.json').version }) + '\n');
