// common.mjs - what every peer runner shares: its arguments, its peak memory,
// and the --serve protocol run.py speaks to it.
import fs from "node:fs";
import readline from "node:readline";

/// "--name value" pairs of the command line, as an object.
export const parseArgs = (argv = process.argv.slice(2)) =>
  Object.fromEntries(argv.reduce((acc, a, i, all) =>
    a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1] ?? ""]] : acc, []));

// VmHWM: Node's maxRSS (getrusage) survives execve and would report the parent's peak.
export const peakRssBytes = () =>
  Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync("/proc/self/status", "utf8"))[1]) * 1024;

/// --serve: the model loaded once; each line "run K" on stdin gets one
/// measure(K) (one JSON line back). Otherwise one measure(runs).
export async function serveOrMeasure(args, runs, measure) {
  if (args.serve === undefined) {
    await measure(runs);
    return;
  }
  console.log(JSON.stringify({ready: true}));
  const lines = readline.createInterface({input: process.stdin});
  for await (const line of lines)
    if (line.startsWith("run "))
      await measure(Number(line.split(" ")[1]));
}
