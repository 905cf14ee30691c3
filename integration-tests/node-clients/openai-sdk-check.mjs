// Drives the router through the official OpenAI Node SDK (npm openai, pinned in package.json) and prints
// one JSON object: what each call returned, or the SDK's error (its class name, status, type, code, param).
// Usage: node openai-sdk-check.mjs BASE_URL [MODEL]; the API key comes from KVROUTE_API_KEY (default "none").
// OpenAiSdkE2ETest runs it against a plain and a prefill/decode router and asserts on the output.
import OpenAI from 'openai';

const [, , baseURL, modelArg] = process.argv;
const options = { baseURL: baseURL + '/v1', maxRetries: 0, timeout: 30_000 };
const client = new OpenAI({ ...options, apiKey: process.env.KVROUTE_API_KEY ?? 'none' });
const out = {};

async function step(name, call) {
  try {
    out[name] = await call();
  } catch (e) {
    out[name] = {
      error: {
        name: e.constructor.name, status: e.status ?? null, type: e.type ?? null, code: e.code ?? null,
        param: e.param ?? null, message: e.message,
      },
    };
  }
}

async function drain(stream, textOf) {
  const seen = { text: '', finish: null, usage: null, chunks: 0 };
  for await (const chunk of stream) {
    seen.chunks++;
    if (chunk.choices?.length) {
      seen.text += textOf(chunk.choices[0]) ?? '';
      seen.finish = chunk.choices[0].finish_reason ?? seen.finish;
    }
    if (chunk.usage) seen.usage = chunk.usage;
  }
  return seen;
}

await step('models', async () => (await client.models.list()).data.map((m) => m.id));
const model = modelArg ?? out.models?.[0];
const messages = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Say hello to the router, please.' },
];

await step('chatStream', async () => drain(
  await client.chat.completions.create({
    model, messages, max_tokens: 8, stream: true, stream_options: { include_usage: true },
  }),
  (choice) => choice.delta?.content));
await step('chat', async () => {
  const r = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: null });
  return { content: r.choices[0].message.content, finish: r.choices[0].finish_reason, usage: r.usage };
});
await step('completion', async () => {
  const r = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 8 });
  return { text: r.choices[0].text, finish: r.choices[0].finish_reason, usage: r.usage };
});
await step('completionStream', async () => drain(
  await client.completions.create({
    model, prompt: 'Once upon a time', max_tokens: 8, stream: true, stream_options: { include_usage: true },
  }),
  (choice) => choice.text));
await step('badRequest', async () => client.chat.completions.create({ model, messages, max_tokens: -1 }));
await step('unknownModel', async () => client.chat.completions.create({ model: 'no-such-model', messages, max_tokens: 4 }));
await step('wrongKey', async () => new OpenAI({ ...options, apiKey: 'wrong-key' }).models.list());

console.log(JSON.stringify(out));
