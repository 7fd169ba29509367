// bench/e2e/llama_runner.mjs - llama.cpp (node-llama-cpp's prebuilt CPU build) on one GGUF model.
//
// node llama_runner.mjs --model M.gguf --tokens 1,2,3 --threads N (--runs K | --serve) [--check OUT.json]
//                       [--steps N]
// Each run: a fresh sequence, the prompt in one batch (prefill, timed), then one
// decoding step of one token after it (timed); both end with the next token. Prints one JSON line:
// {prefill_ms: [..], decode_ms: [..], peak_rss_bytes, backend}. With --check it
// instead writes the next token's logits after the prompt and after the
// decode token (for the parity check against tmc) and times nothing.
import {getLlama, LlamaLogLevel} from "node-llama-cpp";
import fs from "node:fs";
import {parseArgs, peakRssBytes, serveOrMeasure} from "./common.mjs";

const args = parseArgs();
const tokens = args.tokens.split(",").map(Number);
const threads = Number(args.threads ?? 1);
const runs = Number(args.runs ?? 5);

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error,
                              maxThreads: threads});
const model = await llama.loadModel({modelPath: args.model, gpuLayers: 0});
const context = await model.createContext({
  contextSize: Math.max(256, tokens.length + 8), batchSize: tokens.length, sequences: 1,
  threads: {ideal: threads, min: threads}, flashAttention: args["flash-attention"] !== "0"});
const sequence = context.getSequence();
const decodeToken = tokens[0];

if (args.check) {
  // The raw logits of the next token after the prompt and after one more token.
  const logits = async (input) => {
    const out = await sequence.controlledEvaluate(input.map((t, i) =>
      i === input.length - 1 ? [t, {generateNext: {logits: true, options: {temperature: 1, topK: 0, topP: 1, minP: 0}}}] : t));
    const row = [];
    for (const [t, value] of out[input.length - 1].next.logits) row[t] = value;
    return row;
  };
  const prompt = await logits(tokens);
  const step = await logits([decodeToken]);
  fs.writeFileSync(args.check, JSON.stringify({prompt, step}));
  process.exit(0);
}

// Each evaluation asks for the next token after its last input (greedy), as
// generation does: without it llama.cpp computes no logits at all and skips
// the LM head (a third of GPT-2 small's decoding work).
const greedy = {generateNext: {token: true, options: {temperature: 0}}};
const withNext = (input) => args.next === "none" ? input  // for comparison only: no logits
  : input.map((t, i) => (i === input.length - 1 ? [t, greedy] : t));
const prompt = withNext(tokens), step = withNext([decodeToken]);
// --steps N: N consecutive decoding steps after the prompt, each timed, as
// llama-bench's "tg" measures generation; decode_ms then holds steps 2..N of
// every run (the first step after a prompt rebuilds llama.cpp's graph).
const steps = Number(args.steps ?? 1);
async function measure(runs) {
  const prefill = [], decode = [];
  for (let run = 0; run <= runs; ++run) {
    await sequence.clearHistory();
    let start = process.hrtime.bigint();
    await sequence.controlledEvaluate(prompt);
    const p = Number(process.hrtime.bigint() - start) / 1e6;
    const times = [];
    for (let s = 0; s < steps; ++s) {
      start = process.hrtime.bigint();
      await sequence.controlledEvaluate(step);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    if (run > 0) {  // run 0 warms up
      prefill.push(p);
      decode.push(...(steps > 1 ? times.slice(1) : times));
    }
  }
  console.log(JSON.stringify({prefill_ms: prefill, decode_ms: decode,
                              peak_rss_bytes: peakRssBytes(),
                              threads: context.currentThreads ?? threads}));
}

await serveOrMeasure(args, runs, measure);
await context.dispose();
await model.dispose();
