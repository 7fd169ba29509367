// bench/peers/ort_runner.mjs - ONNX Runtime (npm onnxruntime-node, CPU) on the graphs of export_onnx.py.
//
// node ort_runner.mjs --dir D --tokens 1,2 [--source 3,4] --threads N (--runs K | --serve) [--check OUT]
//                     [--prefill FILE] [--optimized FILE] [--phase prefill|decode]
// Sessions: intra-op threads N, inter-op 1, sequential execution, graph
// optimization "all". Each run times prefill.onnx (or --prefill FILE) on the
// tokens and, where D/decode.onnx exists, one decoding step on caches of the
// prompt's length. The prefill graph's inputs are export_onnx.py's (`tokens`
// [T], `source` [S]) or an exporter's standard ones (`input_ids` [1, T], and
// `attention_mask` [1, T] of ones where the graph has it).
// Prints one JSON line {prefill_ms: [..], decode_ms: [..], peak_rss_bytes}.
// --check OUT writes the raw f32 outputs instead (OUT.prefill.f32, and
// OUT.decode.f32 from the caches in D/past_k.f32 and D/past_v.f32).
// --optimized FILE also writes the prefill graph as ONNX Runtime optimized it
// (which fusions fired). --phase loads and times one graph only: each session
// keeps a pool of intra-op threads that spin after a run, and with both in one
// process on 2 vCPUs the idle pool slowed the other's runs by ~25%.
import ort from "onnxruntime-node";
import fs from "node:fs";
import path from "node:path";
import {parseArgs, peakRssBytes, serveOrMeasure} from "./common.mjs";

const args = parseArgs();
const threads = Number(args.threads ?? 1);
const runs = Number(args.runs ?? 5);
const ids = (text) => BigInt64Array.from(text.split(",").map((t) => BigInt(t)));
const tokens = ids(args.tokens);
const options = {intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: "sequential",
                 graphOptimizationLevel: "all", executionProviders: ["cpu"]};

const phase = args.phase ?? "both";
if (!["prefill", "decode", "both"].includes(phase))
  throw new Error(`--phase ${phase}: prefill, decode or both`);
const prefill = phase === "decode" ? null : await ort.InferenceSession.create(
    args.prefill || path.join(args.dir, "prefill.onnx"),
    args.optimized ? {...options, optimizedModelFilePath: args.optimized} : options);
const prefillFeeds = {};
for (const name of prefill?.inputNames ?? []) {
  if (name === "tokens")
    prefillFeeds.tokens = new ort.Tensor("int64", tokens, [tokens.length]);
  else if (name === "input_ids")
    prefillFeeds.input_ids = new ort.Tensor("int64", tokens, [1, tokens.length]);
  else if (name === "attention_mask")
    prefillFeeds.attention_mask = new ort.Tensor("int64", new BigInt64Array(tokens.length).fill(1n),
                                                 [1, tokens.length]);
  else if (name !== "source")
    throw new Error(`the prefill graph has an input '${name}' this runner does not feed`);
}
if (args.source) {
  const source = ids(args.source);
  prefillFeeds.source = new ort.Tensor("int64", source, [source.length]);
}
let decode = null, decodeFeeds = null;
const decodePath = args.dir ? path.join(args.dir, "decode.onnx") : "";
if (phase !== "prefill" && decodePath && fs.existsSync(decodePath)) {
  decode = await ort.InferenceSession.create(decodePath, options);
  const dims = (name) => decode.inputMetadata.find((m) => m.name === name)?.shape;
  let shape = dims("past_k");
  const floats = shape.reduce((a, b) => a * b, 1);
  // A small file's Buffer is a view into Node's shared pool: copy its own bytes.
  const bytes = (file) => { const b = fs.readFileSync(file);
                            return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength); };
  const past = (name) => args.check ? new Float32Array(bytes(path.join(args.dir, `${name}.f32`)))
                                    : new Float32Array(floats);
  decodeFeeds = {tokens: new ort.Tensor("int64", BigInt64Array.of(tokens[0]), [1]),
                 past_k: new ort.Tensor("float32", past("past_k"), shape),
                 past_v: new ort.Tensor("float32", past("past_v"), shape)};
}

if (args.check) {
  const save = (outputs, suffix) => {
    const data = Object.values(outputs)[0].data;
    fs.writeFileSync(`${args.check}.${suffix}.f32`,
                     Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  };
  if (prefill)
    save(await prefill.run(prefillFeeds), "prefill");
  if (decode)
    save(await decode.run(decodeFeeds), "decode");
  process.exit(0);
}

async function measure(runs) {
  const prefillMs = [], decodeMs = [];
  for (let run = 0; run <= runs; ++run) {
    let start = process.hrtime.bigint(), p = 0, d = 0;
    if (prefill) {
      await prefill.run(prefillFeeds);
      p = Number(process.hrtime.bigint() - start) / 1e6;
    }
    if (decode) {
      start = process.hrtime.bigint();
      await decode.run(decodeFeeds);
      d = Number(process.hrtime.bigint() - start) / 1e6;
    }
    if (run > 0) {  // run 0 warms up
      if (prefill) prefillMs.push(p);
      if (decode) decodeMs.push(d);
    }
  }
  console.log(JSON.stringify({prefill_ms: prefillMs, decode_ms: decodeMs,
                              peak_rss_bytes: peakRssBytes()}));
}

await serveOrMeasure(args, runs, measure);
