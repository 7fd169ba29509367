// bench/peers/ort_batch_runner.mjs - ONNX Runtime (npm onnxruntime-node, CPU) encoding a batch of
// inputs in one run: the peer of bench/e2e/batch_encode.c.
//
// node ort_batch_runner.mjs --model M.onnx --ids IDS.i64 --seqs B --threads N
//                           (--rounds R | --check OUT.f32) [--optimized FILE]
// IDS.i64 holds B x T int64 ids (little-endian, input after input; bench/e2e/batch_encode.py
// writes batch_encode.c's ids). The graph is BERT's as standard_model.py or fused_onnx.py
// export it: `input_ids` [batch, sequence] and `attention_mask` [batch, sequence] with a dynamic
// batch axis; each run feeds input_ids [B, T] and an attention mask of ones (no padding, as
// batch_encode.c's length 0). Session as ort_runner.mjs's: intra-op threads N, inter-op 1,
// sequential execution, graph optimization "all".
// Round 0 warms up and is not reported; then R rounds, each one session.run over the B
// inputs, timed whole. Prints one JSON line, as batch_encode.c:
// {seqs, threads, tokens, ms: [per reported round], output_dims, output_floats, checksum
// (the sum of the last round's output), head: [its first values], peak_rss_bytes}.
// --check OUT.f32 writes one run's whole output as raw f32 instead and exits; --optimized
// FILE also writes the graph as ONNX Runtime optimized it for this session (which fusions
// fired).
import ort from "onnxruntime-node";
import fs from "node:fs";
import {parseArgs, peakRssBytes} from "./common.mjs";

const args = parseArgs();
const seqs = Number(args.seqs ?? 1);
const threads = Number(args.threads ?? 1);
const rounds = Number(args.rounds ?? 3);
for (const [name, value] of [["seqs", seqs], ["threads", threads], ["rounds", rounds]])
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name} must be an integer >= 1`);
const raw = fs.readFileSync(args.ids);
if (raw.byteLength % (8 * seqs) !== 0)
  throw new Error(`${args.ids}: ${raw.byteLength} bytes are not ${seqs} inputs of int64 ids`);
const ids = new BigInt64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
const tokens = ids.length / seqs;

const options = {intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: "sequential",
                 graphOptimizationLevel: "all", executionProviders: ["cpu"]};
const session = await ort.InferenceSession.create(
    args.model, args.optimized ? {...options, optimizedModelFilePath: args.optimized} : options);
const feeds = {};
for (const name of session.inputNames) {
  if (name === "input_ids")
    feeds.input_ids = new ort.Tensor("int64", ids, [seqs, tokens]);
  else if (name === "attention_mask")
    feeds.attention_mask = new ort.Tensor("int64", new BigInt64Array(ids.length).fill(1n),
                                          [seqs, tokens]);
  else
    throw new Error(`the graph has an input '${name}' this runner does not feed`);
}
if (!feeds.input_ids)
  throw new Error("the graph has no input_ids input");

const firstOutput = (outputs) => outputs[session.outputNames[0]];

if (args.check) {
  const data = firstOutput(await session.run(feeds)).data;
  fs.writeFileSync(args.check, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  process.exit(0);
}

const ms = [];
let output = null;
for (let round = 0; round <= rounds; ++round) {
  const start = process.hrtime.bigint();
  const outputs = await session.run(feeds);
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  if (round > 0)  // round 0 warms up
    ms.push(elapsed);
  output = firstOutput(outputs);
}
let checksum = 0;
for (const value of output.data)
  checksum += value;
const finite = (v) => (Number.isFinite(v) ? v : null);  // JSON has no NaN
console.log(JSON.stringify({seqs, threads, tokens, ms, output_dims: output.dims,
                            output_floats: output.data.length, checksum: finite(checksum),
                            head: Array.from(output.data.slice(0, 8), finite),
                            peak_rss_bytes: peakRssBytes()}));
