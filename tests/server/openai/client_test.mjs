// h2o serve through OpenAI's official Node client (npm `openai`), so the API
// shape is checked by a client we did not write. Started by run_test.sh:
//   H2O_BIN=build/bin/h2o H2O_MODEL=models/stories260K.gguf node --test client_test.mjs
// One server (`--port 0 --chat-template chatml --api-key ...`) serves every
// test; it must drain and exit 0 on SIGTERM at the end.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import OpenAI from 'openai';

const H2O_BIN = process.env.H2O_BIN;
const H2O_MODEL = process.env.H2O_MODEL;
const API_KEY = 'h2o-test-key';
const PROMPT = 'Once upon a time';

let server;      // the h2o serve child process
let serverLog = '';
let baseURL;     // http://127.0.0.1:PORT/v1
let client;      // OpenAI client with the right key
let modelId;

function startServer() {
  return new Promise((resolve, reject) => {
    assert.ok(H2O_BIN && H2O_MODEL, 'H2O_BIN and H2O_MODEL must be set');
    server = spawn(H2O_BIN, ['serve', '-m', H2O_MODEL, '--port', '0', '--chat-template', 'chatml',
                             '--api-key', API_KEY, '-c', '256', '-t', '1', '--embeddings'],
                   { stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => reject(new Error(`h2o serve not ready after 60 s:\n${serverLog}`)), 60000);
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (text) => {
      serverLog += text;
      const m = serverLog.match(/^h2o serve: listening on http:\/\/([^\s]+):(\d+)$/m);
      if (m && !baseURL) {
        clearTimeout(timer);
        baseURL = `http://127.0.0.1:${m[2]}/v1`;
        resolve();
      }
    });
    server.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (!baseURL) reject(new Error(`h2o serve exited (${code ?? signal}) before it was ready:\n${serverLog}`));
    });
  });
}

function stopServer() {
  return new Promise((resolve) => {
    if (!server || server.exitCode !== null || server.signalCode !== null) {
      resolve({ code: server?.exitCode, signal: server?.signalCode });
      return;
    }
    const timer = setTimeout(() => server.kill('SIGKILL'), 20000);
    server.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal }); });
    server.kill('SIGTERM');
  });
}

before(async () => {
  await startServer();
  client = new OpenAI({ apiKey: API_KEY, baseURL, maxRetries: 0, timeout: 60000 });
  modelId = (await client.models.list()).data[0]?.id ?? 'h2o';
});

after(async () => {
  const { code, signal } = await stopServer();
  if (!baseURL) return;  // never started: before() already failed
  assert.equal(signal, null, `h2o serve was killed by ${signal}:\n${serverLog}`);
  assert.equal(code, 0, `h2o serve exited ${code} on SIGTERM:\n${serverLog}`);
});

// Greedy completion of PROMPT, used as the reference several tests compare with.
async function greedy(extra = {}) {
  return client.completions.create({ model: modelId, prompt: PROMPT, max_tokens: 16, temperature: 0, ...extra });
}

// Expects `promise` to reject with the client's APIError of `status`.
async function expectApiError(promise, status, ErrorClass) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof OpenAI.APIError, `not an APIError: ${err}`);
    assert.ok(err instanceof ErrorClass, `not a ${ErrorClass.name}: ${err}`);
    assert.equal(err.status, status);
    return true;
  });
}

test('models.list names the served model', async () => {
  const page = await client.models.list();
  assert.ok(page.data.length >= 1);
  assert.equal(page.data[0].id, modelId);
  assert.equal(typeof modelId, 'string');
  assert.ok(modelId.length > 0);
  assert.equal(page.data[0].object, 'model');
});

test('completions with a text prompt', async () => {
  const res = await greedy({ max_tokens: 8 });
  assert.equal(res.object, 'text_completion');
  assert.equal(typeof res.id, 'string');
  assert.equal(res.choices.length, 1);
  const [choice] = res.choices;
  assert.equal(choice.index, 0);
  assert.equal(typeof choice.text, 'string');
  assert.ok(choice.text.length > 0, 'empty completion');
  assert.ok(['stop', 'length'].includes(choice.finish_reason), `finish_reason ${choice.finish_reason}`);
  assert.ok(res.usage.prompt_tokens > 0);
  assert.ok(res.usage.completion_tokens >= 1 && res.usage.completion_tokens <= 8);
  assert.equal(res.usage.total_tokens, res.usage.prompt_tokens + res.usage.completion_tokens);
});

test('completions with an array of token ids, used as given', async () => {
  const ids = [1, 100, 200, 300, 400];
  const res = await client.completions.create({ model: modelId, prompt: ids, max_tokens: 6, temperature: 0 });
  assert.equal(res.object, 'text_completion');
  assert.equal(typeof res.choices[0].text, 'string');
  assert.equal(res.usage.prompt_tokens, ids.length);
  assert.ok(res.usage.completion_tokens >= 1 && res.usage.completion_tokens <= 6);
});

test('max_tokens bounds the completion', async () => {
  for (const n of [1, 5]) {
    const res = await greedy({ max_tokens: n });
    const { completion_tokens } = res.usage;
    assert.ok(completion_tokens <= n, `${completion_tokens} tokens for max_tokens ${n}`);
    if (res.choices[0].finish_reason === 'length') assert.equal(completion_tokens, n);
  }
});

test('stop truncates before the stop string', async () => {
  const full = (await greedy({ max_tokens: 24 })).choices[0].text;
  assert.ok(full.length >= 8, `greedy text too short to pick a stop string: ${JSON.stringify(full)}`);
  const from = Math.floor(full.length / 2);
  const stop = full.slice(from, from + 3);
  const expected = full.slice(0, full.indexOf(stop));
  const res = await greedy({ max_tokens: 24, stop: [stop] });
  assert.equal(res.choices[0].text, expected, `stop ${JSON.stringify(stop)} in ${JSON.stringify(full)}`);
  assert.equal(res.choices[0].finish_reason, 'stop');
  // A single string works as well as an array.
  const res2 = await greedy({ max_tokens: 24, stop });
  assert.equal(res2.choices[0].text, expected);
});

test('streamed completion: chunks arrive, the stream ends, the text matches', async () => {
  const whole = (await greedy()).choices[0].text;
  const stream = await greedy({ stream: true });
  let text = '';
  let chunks = 0;
  let finish = null;
  for await (const chunk of stream) {
    chunks += 1;
    assert.equal(chunk.object, 'text_completion');
    for (const c of chunk.choices) {
      text += c.text ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.ok(chunks >= 2, `only ${chunks} chunk(s)`);
  assert.equal(text, whole);
  assert.ok(['stop', 'length'].includes(finish), `finish_reason ${finish}`);
});

test('chat completion (chatml template)', async () => {
  const res = await client.chat.completions.create({
    model: modelId, max_tokens: 8, temperature: 0,
    messages: [{ role: 'system', content: 'You tell stories.' }, { role: 'user', content: 'Tell me a story.' }],
  });
  assert.equal(res.object, 'chat.completion');
  assert.equal(res.choices.length, 1);
  assert.equal(res.choices[0].message.role, 'assistant');
  assert.equal(typeof res.choices[0].message.content, 'string');
  assert.ok(['stop', 'length'].includes(res.choices[0].finish_reason));
  assert.ok(res.usage.prompt_tokens > 0);
  assert.ok(res.usage.completion_tokens >= 1 && res.usage.completion_tokens <= 8);
});

test('streamed chat completion', async () => {
  const params = { model: modelId, max_tokens: 12, temperature: 0, messages: [{ role: 'user', content: 'Hello' }] };
  const whole = (await client.chat.completions.create(params)).choices[0].message.content;
  const stream = await client.chat.completions.create({ ...params, stream: true });
  let text = '';
  let chunks = 0;
  let finish = null;
  for await (const chunk of stream) {
    chunks += 1;
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const c of chunk.choices) {
      text += c.delta?.content ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.ok(chunks >= 2, `only ${chunks} chunk(s)`);
  assert.equal(text, whole);
  assert.ok(['stop', 'length'].includes(finish), `finish_reason ${finish}`);
});

test('logprobs on completions and chat', async () => {
  const res = await greedy({ max_tokens: 4, logprobs: 2 });
  const lp = res.choices[0].logprobs;
  assert.ok(lp, 'no logprobs');
  const n = res.usage.completion_tokens;
  assert.equal(lp.tokens.length, n);
  assert.equal(lp.token_logprobs.length, n);
  for (const x of lp.token_logprobs) assert.ok(typeof x === 'number' && x <= 0, `logprob ${x}`);
  assert.equal(lp.top_logprobs.length, n);
  for (const top of lp.top_logprobs) {
    const values = Object.values(top);
    assert.ok(values.length >= 1 && values.length <= 2, `top_logprobs ${JSON.stringify(top)}`);
    for (const x of values) assert.ok(x <= 0);
  }
  assert.equal(lp.text_offset.length, n);

  const chat = await client.chat.completions.create({
    model: modelId, max_tokens: 4, temperature: 0, logprobs: true, top_logprobs: 2,
    messages: [{ role: 'user', content: 'Hi' }],
  });
  const content = chat.choices[0].logprobs?.content;
  assert.ok(Array.isArray(content), 'no chat logprobs.content');
  assert.equal(content.length, chat.usage.completion_tokens);
  for (const t of content) {
    assert.equal(typeof t.token, 'string');
    assert.ok(t.logprob <= 0);
    assert.equal(t.top_logprobs.length, 2);
    // Greedy: the chosen token is the most likely one.
    assert.ok(t.logprob >= Math.max(...t.top_logprobs.map((x) => x.logprob)) - 1e-4);
  }
});

test('per-request KV policy via an extra body field', async () => {
  // The client passes fields it does not know through to the body as given.
  const res = await greedy({ max_tokens: 8, kv: 'h2o:heavy=8,recent=8' });
  assert.equal(res.object, 'text_completion');
  assert.ok(res.usage.completion_tokens >= 1);
  // Streaming and chat take it too.
  const stream = await greedy({ max_tokens: 8, kv: 'h2o:heavy=8,recent=8', stream: true });
  let chunks = 0;
  for await (const _ of stream) chunks += 1;
  assert.ok(chunks >= 1);
  const chat = await client.chat.completions.create({
    model: modelId, max_tokens: 4, kv: 'h2o:heavy=8,recent=8', messages: [{ role: 'user', content: 'Hi' }],
  });
  assert.equal(chat.object, 'chat.completion');
  // An unknown policy is a 400 naming the field.
  await assert.rejects(greedy({ kv: 'no-such-policy' }), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError, `${err}`);
    assert.equal(err.status, 400);
    assert.equal(err.param, 'kv');
    return true;
  });
});

test('a bad request is a 400 in OpenAI error shape, and the server keeps serving', async () => {
  await assert.rejects(greedy({ max_tokens: -1 }), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError, `${err}`);
    assert.equal(err.status, 400);
    assert.equal(typeof err.error?.message, 'string');
    assert.ok(err.error.message.length > 0);
    assert.equal(typeof err.type, 'string');
    assert.equal(err.param, 'max_tokens');
    assert.ok('code' in err.error, 'error has no code field');
    return true;
  });
  // The same body over plain HTTP: exactly {"error": {message, type, param, code}}.
  const res = await fetch(`${baseURL}/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ model: modelId, prompt: PROMPT, max_tokens: -1 }),
  });
  assert.equal(res.status, 400);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = await res.json();
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  // Malformed JSON is a 400 too.
  const bad = await fetch(`${baseURL}/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${API_KEY}` },
    body: '{"prompt": ',
  });
  assert.equal(bad.status, 400);
  assert.equal(typeof (await bad.json()).error.message, 'string');
  // Still serving.
  const ok = await greedy({ max_tokens: 2 });
  assert.ok(ok.usage.completion_tokens >= 1);
});

test('--api-key: a wrong or missing key is a 401, /health stays open', async () => {
  const wrong = new OpenAI({ apiKey: 'not-the-key', baseURL, maxRetries: 0 });
  await expectApiError(wrong.completions.create({ model: modelId, prompt: PROMPT, max_tokens: 2 }),
                       401, OpenAI.AuthenticationError);
  await expectApiError(wrong.models.list(), 401, OpenAI.AuthenticationError);
  const missing = await fetch(`${baseURL}/models`);
  assert.equal(missing.status, 401);
  const body = await missing.json();
  assert.equal(typeof body.error?.message, 'string');
  const health = await fetch(baseURL.replace(/\/v1$/, '/health'));
  assert.equal(health.status, 200);
});

// The client asks for base64 unless told otherwise and decodes it itself:
// both encodings give the same unit vectors, one per input, in order.
test('embeddings in both encodings', async () => {
  const input = [PROMPT, 'The cat sat.'];
  const decoded = await client.embeddings.create({ model: modelId, input });
  const floats = await client.embeddings.create({ model: modelId, input, encoding_format: 'float' });
  assert.equal(decoded.object, 'list');
  assert.equal(decoded.data.length, 2);
  assert.ok(decoded.usage.prompt_tokens > 0);
  for (let i = 0; i < 2; ++i) {
    assert.equal(decoded.data[i].index, i);
    const a = decoded.data[i].embedding, b = floats.data[i].embedding;
    assert.equal(a.length, 64);  // the model's n_embd
    assert.deepEqual(a.map((v) => Math.fround(v)), b.map((v) => Math.fround(v)));
    const norm = Math.sqrt(a.reduce((s, v) => s + v * v, 0));
    assert.ok(Math.abs(norm - 1) < 1e-4, `norm ${norm}`);
  }
  assert.notDeepEqual(decoded.data[0].embedding, decoded.data[1].embedding);
});

test('models.retrieve finds the served model, and a 404 for another', async () => {
  const model = await client.models.retrieve(modelId);
  assert.equal(model.id, modelId);
  assert.equal(model.object, 'model');
  await expectApiError(client.models.retrieve('no-such-model'), 404, OpenAI.NotFoundError);
});

// Structured output: sampled at temperature 1, the reply is JSON valid
// against the schema (checked here by hand), and a json_object reply is an
// object (or, cut by max_tokens, a JSON text that only ran out).
test('response_format json_schema and json_object', async () => {
  const schema = {
    type: 'object',
    properties: { mood: { enum: ['happy', 'sad'] }, n: { type: 'integer' } },
    required: ['mood', 'n'],
  };
  for (const seed of [1, 2, 3]) {
    const res = await client.chat.completions.create({
      model: modelId, max_tokens: 200, temperature: 1, seed,
      messages: [{ role: 'user', content: 'How do you feel?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'feeling', strict: true, schema } },
    });
    const text = res.choices[0].message.content;
    assert.equal(res.choices[0].finish_reason, 'stop', text);
    const value = JSON.parse(text);
    assert.deepEqual(Object.keys(value).sort(), ['mood', 'n'], text);
    assert.ok(['happy', 'sad'].includes(value.mood), text);
    assert.ok(Number.isInteger(value.n), text);
  }
  const res = await client.completions.create({
    model: modelId, prompt: PROMPT, max_tokens: 64, temperature: 1, seed: 4,
    response_format: { type: 'json_object' },
  });
  const text = res.choices[0].text;
  if (res.choices[0].finish_reason === 'stop') {
    const value = JSON.parse(text);
    assert.equal(typeof value, 'object', text);
    assert.ok(!Array.isArray(value) && value !== null, text);
  } else {
    assert.throws(() => JSON.parse(text), /end of JSON input|Unterminated|Expected/, text);
  }
  await expectApiError(client.completions.create({
    model: modelId, prompt: PROMPT, max_tokens: 4,
    response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'string', pattern: 'a+' } } },
  }), 400, OpenAI.BadRequestError);
});
