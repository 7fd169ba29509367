#!/usr/bin/env bash
# tune_e2e.sh TMC SOURCE_DIR WORK_DIR - `tmc tune` end to end (see CMakeLists.txt).
set -euo pipefail
TMC="$1"
SRC="$2"
WORK="$3"
SPEC="$SRC/tests/malformed/tuning/Inputs/tiny.tm"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }

# check_tuned LOG DB [KERNELS]: the run logged in LOG tuned every kernel of its
# spec (KERNELS of them, when given) into DB. Which kernels got a faster
# schedule depends on timings, never asserted; but a run that tuned nothing
# (0 kernels, an empty database) or left a kernel out must not pass.
check_tuned() {
  local log=$1 db=$2 want=${3:-} line kernels entries
  line=$(grep '^tmc: done after' "$log") || fail "$log: no summary line"
  [[ $line =~ :\ [0-9]+\ of\ ([0-9]+)\ kernels\ got ]] || fail "$log: no kernel count in: $line"
  kernels=${BASH_REMATCH[1]}
  [[ $kernels -gt 0 ]] || fail "$log: tuned 0 kernels: $line"
  [[ -z $want || $kernels -eq $want ]] || fail "$log: tuned $kernels kernels, the spec has $want: $line"
  entries=$(grep -c '"kernel"' "$db" || true)
  [[ $entries -eq $kernels ]] || fail "$db: $entries entries for the $kernels kernels tuned ($line)"
}

# check_found LOG KERNELS: a compile with the database found a tuned entry
# for each of its KERNELS kernels ("tuned schedules for F of N kernels: ...;
# D more tuned and kept their default": F + D of N).
check_found() {
  local log=$1 want=$2 line faster kept=0
  line=$(grep 'tuned schedules for' "$log") || { cat "$log"; fail "compile did not say which kernels it found"; }
  [[ $line =~ tuned\ schedules\ for\ ([0-9]+)\ of\ $want\ kernels ]] || fail "not $want kernels: $line"
  faster=${BASH_REMATCH[1]}
  [[ $line =~ ([0-9]+)\ more\ tuned\ and\ kept ]] && kept=${BASH_REMATCH[1]}
  (( faster + kept == want )) || fail "tuned entries found for $faster + $kept of $want kernels: $line"
}

# Tune a few candidates per kernel (stderr is not a terminal: plain progress
# lines). The run is bounded by --max-trials, not by the clock, so that what it
# does is the same on a fast machine, a loaded one or under ASan; the budget
# is only a backstop.
"$TMC" tune "$SPEC" --db db.jsonl --budget 10m --max-trials 3 --threads 1 2> tune.log || { cat tune.log; fail "tmc tune failed"; }
cat tune.log
# The tiny spec has 7 distinct kernels (its q, k and v form one fused GEMM).
grep -q '^tune profile \[1/7\]' tune.log || fail "no profile progress lines"
grep -q 'trials' tune.log || fail "no search progress lines"
head -1 db.jsonl | grep -q '"format":"tmc-tuning-db"' || fail "no database header"
check_tuned tune.log db.jsonl 7
entries=$(grep -c '"kernel"' db.jsonl)
trials_before=$(/usr/bin/python3 -c "import json; print(sum(json.loads(l)['trials'] for l in open('db.jsonl') if '\"kernel\"' in l))")

# An entry under the name an older tmc gave a kernel (numbers as
# 1p0000000000000001em05) is reported stale, and the run that re-tunes the
# kernel drops it.
/usr/bin/python3 - <<'PY'
import json
lines = open("db.jsonl").read().splitlines()
norm = next(json.loads(l) for l in lines if '"add_layernorm_d32_eps1e-05_b"' in l)
norm["kernel"] = "add_layernorm_d32_e1p0000000000000001em05_b"
open("db.jsonl", "a").write(json.dumps(norm) + "\n")
PY

# --resume continues: trials add up, the entries are replaced, not duplicated.
"$TMC" tune "$SPEC" --db db.jsonl --budget 10m --max-trials 2 --threads 1 --resume 2> resume.log || { cat resume.log; fail "tmc tune --resume failed"; }
trials_after=$(/usr/bin/python3 -c "import json; print(sum(json.loads(l)['trials'] for l in open('db.jsonl') if '\"kernel\"' in l))")
[[ $trials_after -gt $trials_before ]] || fail "--resume did not add trials ($trials_before -> $trials_after)"
check_tuned resume.log db.jsonl 7
grep -q "entry for kernel 'add_layernorm_d32_e1p0000000000000001em05_b': stale: an older tmc's name for kernel 'add_layernorm_d32_eps1e-05_b'" resume.log || { cat resume.log; fail "the former name was not reported stale"; }
! grep -q 'e1p0000000000000001em05' db.jsonl || fail "the entry under the former name was kept"
/usr/bin/python3 - <<'PY' || fail "duplicate entries after --resume"
import json, collections
keys = [json.loads(l)["kernel"] for l in open("db.jsonl") if '"kernel"' in l]
assert all(n == 1 for n in collections.Counter(keys).values()), keys
PY

# Compile with the database (it says what it found) and check the compiled
# kernels against the reference evaluator, value by value.
"$TMC" init-weights "$SPEC" -o w.safetensors --seed 5
"$TMC" verify "$SPEC" --weights w.safetensors --tokens 3,1,4,1,5,9,2,6 --tuning-db db.jsonl > verify.txt 2> verify.log || { cat verify.txt verify.log; fail "tmc verify --tuning-db"; }
check_found verify.log 7
grep -q 'within tolerance' verify.txt || fail "verify did not pass"

# A database with a schedule unlike the default (AVX2 target, hand-written)
# compiles to kernels that still match the reference.
"$TMC" verify "$SPEC" --target x86-64-avx2 --weights w.safetensors --tokens 3,1,4,1,5,9,2,6 \
  --tuning-db "$SRC/tests/malformed/tuning/Inputs/valid.jsonl" > verify2.txt 2> verify2.log || { cat verify2.txt verify2.log; fail "verify with a non-default schedule"; }
grep -q 'tuned schedules for 1 of 7 kernels: linear_k32_n64_b_relu' verify2.log || fail "the non-default schedule was not used"

# The executable itself runs with the tuned schedules.
"$TMC" compile "$SPEC" --tuning-db db.jsonl -o model 2> compile.log
./model --weights w.safetensors --tokens 3,1,4 --output out.npy > /dev/null
[[ -s out.npy ]] || fail "no output from the tuned executable"

# A decoder: its attention runs a variant kernel of its own at T = 1, which the
# harness times and checks there (a decode time in its entry, no failed trial);
# the executable compiled with the database generates (the variant at T = 1).
DEC="$SRC/tests/tune/Inputs/tiny-decoder.tm"
"$TMC" tune "$DEC" --db dec.jsonl --budget 10m --max-trials 1 --threads 1 2> dec.log || { cat dec.log; fail "tmc tune on a decoder failed"; }
if grep -q 'attention.*\(failed\|compile:\)' dec.log; then cat dec.log; fail "an attention candidate failed"; fi
check_tuned dec.log dec.jsonl
/usr/bin/python3 - <<'PY' || fail "no decode time for the decoder's attention"
import json
entries = [json.loads(l) for l in open("dec.jsonl") if '"kernel"' in l]
attention = [e for e in entries if e["kernel"].startswith("attention_")]
assert attention and all(e["default_decode_ms"] > 0 for e in attention), attention
PY
"$TMC" init-weights "$DEC" -o wd.safetensors --seed 5
"$TMC" compile "$DEC" --tuning-db dec.jsonl -o decoder 2> compile-dec.log
./decoder --weights wd.safetensors --tokens 3,1,4 --max-new 4 > generate.txt || fail "the tuned decoder did not generate"

# The report: a row per tuned kernel, totals, and the chart.
"$TMC" tune "$SPEC" --db db.jsonl --report --svg chart.svg > report.txt
cat report.txt
grep -q 'default ms' report.txt || fail "no report table"
grep -q 'kernel time per forward pass' report.txt || fail "no report totals"
# The GEMM limit, measured by the tuning run on this machine (x86-64 with AVX2 at least).
grep -Eq '^GEMM limit: [0-9.]+ GFLOP/s \(FMA peak at [0-9]+ threads' report.txt || fail "no measured GEMM limit"
grep -Eq 'the defaults are (not )?within 10% of the limit|the limit was measured low' report.txt || fail "no verdict against the GEMM limit"
# Every kernel's memory limit, measured by the run; its row's distance from
# its nearer limit; a verdict per GEMM taking 10% or more of the time.
/usr/bin/python3 - <<'PY' || fail "an entry without its measured memory limit"
import json
entries = [json.loads(l) for l in open("db.jsonl") if '"kernel"' in l]
assert entries and all(e["memory_ms"] > 0 for e in entries), entries
PY
grep -Eq '^linear_k32_n96_b_none .* [0-9]+% (FMA|mem)  ' report.txt || fail "no distance from the limit in the GEMM's row"
# The verdicts, on a copy of the database whose times and limits make three
# GEMMs heavy (about 25% of the time each): one at its memory limit, one at
# the FMA peak, one far from both.
/usr/bin/python3 - <<'PY'
import json
lines = open("db.jsonl").read().splitlines()
out = [lines[0]]
for line in lines[1:]:
    e = json.loads(line)
    # 2 * 16 tokens * K * N flops; 1 ms a call, 2 calls each.
    if e["kernel"] == "linear_k32_n96_b_none":
        e.update(default_ms=1.0, best_ms=1.0, memory_ms=0.95)
    elif e["kernel"] == "linear_k64_n32_b_none":
        e.update(default_ms=1.0, best_ms=1.0, memory_ms=0.01, fma_peak_gflops=65536 / 0.95e6)
    elif e["kernel"] == "linear_k32_n64_b_relu":
        e.update(default_ms=1.0, best_ms=1.0, memory_ms=0.1)
    out.append(json.dumps(e))
open("verdicts.jsonl", "w").write("\n".join(out) + "\n")
PY
"$TMC" tune "$SPEC" --db verdicts.jsonl --report --svg verdicts.svg > verdicts.txt
cat verdicts.txt
grep -q '^GEMMs taking 10% or more of the kernel time' verdicts.txt || fail "no per-GEMM verdicts"
grep -Eq '^  linear_k32_n96_b_none: 33% of the time, 1 ms; .* 95% of the memory limit for that traffic .*: memory-bound$' verdicts.txt || fail "no memory-bound verdict"
grep -Eq '^  linear_k64_n32_b_none: 33% of the time, 1 ms; 95% of the FMA peak .*: within 10% of the FMA peak$' verdicts.txt || fail "no FMA verdict"
grep -Eq '^  linear_k32_n64_b_relu: 33% of the time, 1 ms; .*: neither \(at 10% of its nearer limit, memory\)$' verdicts.txt || fail "no 'neither' verdict"
[[ $(grep -c '^  linear_' verdicts.txt) -eq 3 ]] || fail "a verdict for a GEMM under 10% of the time"
grep -q '^1 of 3 such GEMMs is more than 10% from their limit' verdicts.txt || fail "wrong verdict count"
rows=$(grep -c '^linear_\|^attention_\|^embed_\|^add_layernorm_' report.txt)
[[ $rows -eq $entries ]] || fail "report rows ($rows) != database entries ($entries)"
grep -q '<svg' chart.svg && grep -q '<polyline' chart.svg || fail "no chart"
echo "PASS"
