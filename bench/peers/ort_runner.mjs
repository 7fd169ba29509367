// bench/peers/ort_runner.mjs - ONNX Runtime (npm onnxruntime-node, CPU) on the graphs of export_onnx.py.
//
// node ort_runner.mjs --dir D --tokens 1,2 [--source 3,4] --threads N (--runs K | --serve) [--check OUT]
// Sessions: intra-op threads N, inter-op 1, sequential execution, graph
// optimization "all". Each run times prefill.onnx on the tokens and, where
// decode.onnx exists, one decoding step on caches of the prompt's length.
// Prints one JSON line {prefill_ms: [..], decode_ms: [..], peak_rss_bytes}.
// --check OUT writes the raw f32 outputs instead (OUT.prefill.f32, and
// OUT.decode.f32 from the caches in D/past_k.f32 and D/past_v.f32).
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

const prefill = await ort.InferenceSession.create(path.join(args.dir, "prefill.onnx"), options);
const prefillFeeds = {tokens: new ort.Tensor("int64", tokens, [tokens.length])};
if (args.source) {
  const source = ids(args.source);
  prefillFeeds.source = new ort.Tensor("int64", source, [source.length]);
}
let decode = null, decodeFeeds = null;
const decodePath = path.join(args.dir, "decode.onnx");
if (fs.existsSync(decodePath)) {
  decode = await ort.InferenceSession.create(decodePath, options);
  const dims = (name) => decode.inputMetadata.find((m) => m.name === name)?.shape;
  let shape = dims("past_k");
  const floats = shape.reduce((a, b) => a * b, 1);
  const past = (name) => args.check
    ? new Float32Array(fs.readFileSync(path.join(args.dir, `${name}.f32`)).buffer.slice(0))
    : new Float32Array(floats);
  decodeFeeds = {tokens: new ort.Tensor("int64", BigInt64Array.of(tokens[0]), [1]),
                 past_k: new ort.Tensor("float32", past("past_k"), shape),
                 past_v: new ort.Tensor("float32", past("past_v"), shape)};
}

if (args.check) {
  const save = (out, suffix) => fs.writeFileSync(`${args.check}.${suffix}.f32`,
      Buffer.from(out.out.data.buffer, out.out.data.byteOffset, out.out.data.byteLength));
  save(await prefill.run(prefillFeeds), "prefill");
  if (decode)
    save(await decode.run(decodeFeeds), "decode");
  process.exit(0);
}

async function measure(runs) {
  const prefillMs = [], decodeMs = [];
  for (let run = 0; run <= runs; ++run) {
    let start = process.hrtime.bigint();
    await prefill.run(prefillFeeds);
    const p = Number(process.hrtime.bigint() - start) / 1e6;
    let d = 0;
    if (decode) {
      start = process.hrtime.bigint();
      await decode.run(decodeFeeds);
      d = Number(process.hrtime.bigint() - start) / 1e6;
    }
    if (run > 0) {  // run 0 warms up
      prefillMs.push(p);
      if (decode) decodeMs.push(d);
    }
  }
  console.log(JSON.stringify({prefill_ms: prefillMs, decode_ms: decodeMs,
                              peak_rss_bytes: peakRssBytes()}));
}

await serveOrMeasure(args, runs, measure);
