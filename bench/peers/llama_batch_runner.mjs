// bench/peers/llama_batch_runner.mjs - llama.cpp (node-llama-cpp's prebuilt CPU build) decoding
// many sequences at once: the peer of bench/e2e/batch_decode.c.
//
// node llama_batch_runner.mjs --model M.gguf --seqs B --prompt N --steps S --threads T --rounds R
//                             [--vocab V] [--flash-attention 0]
// One context with B sequences (each its own N + S + 8 cells or more; node-llama-cpp's
// contextSize is per sequence, the context allocates contextSize x B) and a batch size that
// holds all B prompts. Each round: every sequence's history cleared, the B prompts evaluated
// concurrently (Promise.all; each asks for the greedy next token after its last token, as
// llama_runner.mjs does) and timed together, then S steps, each evaluating every sequence's
// next token concurrently (Promise.all), timed whole (the greedy sampling included).
//
// Concurrent evaluations of one context's sequences become one llama_decode: each
// controlledEvaluate queues its tokens on the context (LlamaContext._decodeTokens pushes onto
// _queuedDecodes and calls _scheduleDecode, which dispatches on the next event-loop cycle,
// setImmediate, or at once when every sequence has queued), and dispatchPendingBatch fits the
// queued items into one batch of up to batchSize tokens (the "maximumParallelism" strategy),
// calls addToBatch per sequence and decodeBatch (llama_decode) once. The runner counts the
// context's decodeBatch calls and reports the most per prefill and per step
// (llama_decode_calls), so a run shows that each step was one decode.
//
// Round 0 warms up and is not reported; the first step of each round is left out (llama.cpp's
// first step after a prompt rebuilds its graph). Prints one JSON line, as batch_decode.c:
// {seqs, threads, current_threads, prompt, steps, prefill_ms: [per round], step_ms: [steps
// 2..S of every reported round], tokens: [sequence 0's greedy tokens in the last round],
// peak_rss_bytes, llama_decode_calls: {prefill, step}, flash_attention, context_size (per
// sequence), batch_size, kv_cache_types: {key, value} (ggml type names: F16 unless
// node-llama-cpp's default changes)}.
import {getLlama, GgmlType, LlamaLogLevel} from "node-llama-cpp";
import {parseArgs, peakRssBytes} from "./common.mjs";

const args = parseArgs();
const seqs = Number(args.seqs ?? 1);
const promptLength = Number(args.prompt ?? 128);
const steps = Number(args.steps ?? 16);
const threads = Number(args.threads ?? 1);
const rounds = Number(args.rounds ?? 3);
for (const [name, value, low] of [["seqs", seqs, 1], ["prompt", promptLength, 1], ["steps", steps, 1],
                                  ["threads", threads, 1], ["rounds", rounds, 1]])
  if (!Number.isInteger(value) || value < low)
    throw new Error(`--${name} must be an integer >= ${low}`);

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error,
                              maxThreads: threads});
const model = await llama.loadModel({modelPath: args.model, gpuLayers: 0});
const vocab = Number(args.vocab ?? model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length);
if (!Number.isInteger(vocab) || vocab < 1)
  throw new Error("the vocabulary size is unknown: pass --vocab");
const flashAttention = args["flash-attention"] !== "0";
const context = await model.createContext({
  contextSize: Math.max(256, promptLength + steps + 8), batchSize: seqs * promptLength,
  sequences: seqs, threads: {ideal: threads, min: threads}, flashAttention});
const sequences = Array.from({length: seqs}, () => context.getSequence());

// Every llama_decode of the context (an internal handle of node-llama-cpp's, wrapped only to
// count its calls).
let decodes = 0;
const native = context._ctx;
if (typeof native?.decodeBatch !== "function")
  throw new Error("node-llama-cpp's context has no _ctx.decodeBatch to count llama_decode calls");
const decodeBatch = native.decodeBatch.bind(native);
// An own property: the addon's methods are read-only properties of its prototype.
Object.defineProperty(native, "decodeBatch", {
  value: (...rest) => {
    ++decodes;
    return decodeBatch(...rest);
  },
  configurable: true, writable: true});

// Sequence s's prompt: the same 31-bit LCG stream as batch_decode.c's prompt_of.
function promptOf(s) {
  let x = s * 7919 + 1;
  const out = [];
  for (let i = 0; i < promptLength; ++i) {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    out.push((x >>> 8) % vocab);
  }
  return out;
}

// Each evaluation asks for the greedy next token after its last input, as generation does
// (without it llama.cpp computes no logits and skips the LM head).
const greedy = {generateNext: {token: true, options: {temperature: 0}}};
const withNext = (input) => input.map((t, i) => (i === input.length - 1 ? [t, greedy] : t));
const prompts = Array.from({length: seqs}, (_, s) => withNext(promptOf(s)));
const nextToken = (out, index) => {
  const token = out[index]?.next?.token;
  if (token == null)
    throw new Error("llama.cpp returned no next token");
  return token;
};

const prefillMs = [], stepMs = [];
let tokens = [], prefillDecodes = 0, stepDecodes = 0;
for (let round = 0; round <= rounds; ++round) {
  await Promise.all(sequences.map((sequence) => sequence.clearHistory()));
  decodes = 0;
  let start = process.hrtime.bigint();
  const first = await Promise.all(sequences.map((sequence, s) =>
    sequence.controlledEvaluate(prompts[s])));
  const next = first.map((out) => nextToken(out, promptLength - 1));
  const p = Number(process.hrtime.bigint() - start) / 1e6;
  prefillDecodes = Math.max(prefillDecodes, decodes);
  const roundTokens = [next[0]];
  const times = [];
  for (let step = 0; step < steps; ++step) {
    decodes = 0;
    start = process.hrtime.bigint();
    const outs = await Promise.all(sequences.map((sequence, s) =>
      sequence.controlledEvaluate([[next[s], greedy]])));
    for (let s = 0; s < seqs; ++s)
      next[s] = nextToken(outs[s], 0);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    stepDecodes = Math.max(stepDecodes, decodes);
    roundTokens.push(next[0]);
  }
  if (round > 0) {  // round 0 warms up
    prefillMs.push(p);
    stepMs.push(...(steps > 1 ? times.slice(1) : times));
    tokens = roundTokens;
  }
}
console.log(JSON.stringify({seqs, threads, current_threads: context.currentThreads ?? null,
                            prompt: promptLength, steps, prefill_ms: prefillMs, step_ms: stepMs, tokens,
                            peak_rss_bytes: peakRssBytes(),
                            llama_decode_calls: {prefill: prefillDecodes, step: stepDecodes},
                            flash_attention: flashAttention, context_size: context.contextSize,
                            kv_cache_types: {key: GgmlType[context.kvCacheKeyType] ?? null,
                                             value: GgmlType[context.kvCacheValueType] ?? null},
                            batch_size: context.batchSize}));
await context.dispose();
await model.dispose();
