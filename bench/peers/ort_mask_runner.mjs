// bench/peers/ort_mask_runner.mjs - ONNX Runtime (npm onnxruntime-node, CPU) on a graph with a
// dense attention mask input: bench/e2e/long_context.py's peer.
//
// node ort_mask_runner.mjs --model M.onnx --tokens-file T.i64 --mask MASK.u8 --threads N
//                          (--serve | --runs K | --check OUT.f32)
// The graph (long_context_peers.py export_onnx) takes `tokens` int64 [T] and `mask` f32 [T, T];
// MASK.u8 holds one byte per (query, key), 1 = allowed, and is fed as 0 / -Infinity, built once
// before any run. Session as ort_runner.mjs's: intra-op threads N, inter-op 1, sequential,
// graph optimization "all". Each measurement prints one JSON line {prefill_ms: [..],
// peak_rss_bytes}; the process's first measurement starts with an untimed warm-up run.
// --check writes the output's raw f32 values and exits.
import ort from "onnxruntime-node";
import fs from "node:fs";
import {parseArgs, peakRssBytes, serveOrMeasure} from "./common.mjs";

const args = parseArgs();
const threads = Number(args.threads ?? 1);
const raw = fs.readFileSync(args["tokens-file"]);
const tokens = new BigInt64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
const T = tokens.length;
const allowed = fs.readFileSync(args.mask);
if (allowed.length !== T * T)
  throw new Error(`${args.mask}: ${allowed.length} bytes, expected ${T} x ${T}`);
const mask = new Float32Array(T * T);
for (let i = 0; i < mask.length; ++i)
  if (!allowed[i]) mask[i] = -Infinity;

const session = await ort.InferenceSession.create(args.model, {
  intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: "sequential",
  graphOptimizationLevel: "all", executionProviders: ["cpu"]});
const feeds = {tokens: new ort.Tensor("int64", tokens, [T]),
               mask: new ort.Tensor("float32", mask, [T, T])};

if (args.check) {
  const data = Object.values(await session.run(feeds))[0].data;
  fs.writeFileSync(args.check, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  process.exit(0);
}

let warm = false;
async function measure(runs) {
  const times = [];
  for (let run = warm ? 1 : 0; run <= runs; ++run) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    if (run > 0) times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  warm = true;
  console.log(JSON.stringify({prefill_ms: times, peak_rss_bytes: peakRssBytes()}));
}

await serveOrMeasure(args, Number(args.runs ?? 3), measure);
