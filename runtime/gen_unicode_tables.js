// gen_unicode_tables.js - writes runtime/unicode_tables.inc
//
// The tokenizers need a handful of Unicode properties (letters and numbers for
// GPT-2's pre-tokenizer regex, punctuation, controls and accents for BERT's
// basic tokenizer). The runtime may only use the C++ standard library, which
// has no Unicode database, so the tables are generated from the one in Node
// (ICU), the same engine that runs the reference GPT-2 encoder (gpt-3-encoder).
//
//   node runtime/gen_unicode_tables.js > runtime/unicode_tables.inc
//   node runtime/gen_unicode_tables.js nfc > runtime/unicode_nfc_tables.inc
//
// The second writes what canonical composition (NFC, the normalizer of
// Qwen2's tokenizer.json) needs. JavaScript exposes normalize() but not the
// canonical combining classes, so those are recovered from normalize() itself:
// NFD puts two adjacent non-starters p q in the order q p exactly when
// ccc(p) > ccc(q), which orders every non-starter; the tables carry that
// order as a rank (1, 2, ...), all the algorithm compares.
'use strict';

const kMax = 0x110000;

function ranges(re) {
  const out = [];
  let start = -1;
  for (let c = 0; c <= kMax; ++c) {
    const ok = c < kMax && re.test(String.fromCodePoint(c));
    if (ok && start < 0) start = c;
    if (!ok && start >= 0) {
      out.push([start, c - 1]);
      start = -1;
    }
  }
  return out;
}

const hex = (c) => '0x' + c.toString(16);
const cps = (s) => [...s].map((x) => x.codePointAt(0));

function emit(name, rows, perLine, doc) {
  const lines = [`/// ${doc}`, `static constexpr ${name.type} ${name.id}[] = {`];
  for (let i = 0; i < rows.length; i += perLine)
    lines.push('    ' + rows.slice(i, i + perLine).map((r) => `{${r.map(hex).join(', ')}},`).join(' '));
  lines.push('};', '');
  console.log(lines.join('\n'));
}

function emitRanges(id, re, doc) {
  emit({type: 'CodeRange', id}, ranges(re), 6, doc);
}

// Full lowercase mapping, one code point at a time. Single-code-point results
// are run-length coded as {first, last, delta, stride}; the rest (U+0130 only,
// in current Unicode) are listed as {cp, first, second}.
function lowerTables() {
  const runs = [];
  const multi = [];
  let cur = null;
  for (let c = 0; c < kMax; ++c) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const lower = cps(String.fromCodePoint(c).toLowerCase());
    if (lower.length === 1 && lower[0] === c) continue;
    if (lower.length !== 1) {
      if (lower.length !== 2) throw new Error('lowercase of ' + hex(c) + ' is longer than 2');
      multi.push([c, lower[0], lower[1]]);
      continue;
    }
    const delta = lower[0] - c;
    if (cur && cur[2] === delta && c - cur[1] === cur[3]) {
      cur[1] = c;
    } else if (cur && cur[0] === cur[1] && cur[2] === delta && c - cur[1] === 2) {
      cur[1] = c;
      cur[3] = 2;
    } else {
      cur = [c, c, delta, 1];
      runs.push(cur);
    }
  }
  // Deltas are signed; print them as such.
  const lines = ['/// Lowercase: cp in [first, last] with (cp - first) % stride == 0 maps to cp + delta.',
                 'static constexpr CaseRun kLowerRuns[] = {'];
  for (let i = 0; i < runs.length; i += 4)
    lines.push('    ' + runs.slice(i, i + 4).map((r) => `{${hex(r[0])}, ${hex(r[1])}, ${r[2]}, ${r[3]}},`).join(' '));
  lines.push('};', '');
  console.log(lines.join('\n'));
  emit({type: 'CodeMap', id: 'kLowerMulti'}, multi, 4, 'Lowercase mappings to two code points.');
}

// What BERT's _run_strip_accents leaves of one code point: NFD, then drop
// nonspacing marks (Mn). Hangul syllables are decomposed algorithmically in
// unicode.cpp and not listed; Mn code points themselves are dropped by class.
function stripTable() {
  const rows = [];
  const mn = /\p{Mn}/u;
  for (let c = 0; c < kMax; ++c) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    if (c >= 0xac00 && c <= 0xd7a3) continue;
    const s = String.fromCodePoint(c);
    if (mn.test(s)) continue;
    const base = cps(s.normalize('NFD')).filter((x) => !mn.test(String.fromCodePoint(x)));
    if (base.length === 1 && base[0] === c) continue;
    if (base.length === 0 || base.length > 3) throw new Error('unexpected decomposition of ' + hex(c));
    while (base.length < 3) base.push(0);
    rows.push([c, ...base]);
  }
  emit({type: 'CodeMap3', id: 'kStripAccents'}, rows, 4,
       'NFD without nonspacing marks: {cp, up to three code points, 0-padded}.');
}


const isSurrogate = (c) => c >= 0xd800 && c <= 0xdfff;
const isHangulSyllable = (c) => c >= 0xac00 && c <= 0xd7a3;
const str = (...list) => String.fromCodePoint(...list);
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// Combining-class ranks of the code points NFD leaves alone. U+0345 has the
// highest class (240) and U+0301 class 230: a non-starter q swaps with one of
// them (ccc 0 < ccc(q) < 240, or ccc(q) > 230).
function combiningRanks() {
  const swaps = (p, q) => same(cps(str(p, q).normalize('NFD')), [q, p]);
  const marks = [];
  for (let c = 0; c < kMax; ++c) {
    if (isSurrogate(c) || !same(cps(str(c).normalize('NFD')), [c])) continue;
    if (c === 0x345 || swaps(0x345, c) || swaps(c, 0x301)) marks.push(c);
  }
  marks.sort((p, q) => (swaps(p, q) ? 1 : swaps(q, p) ? -1 : 0));
  const rank = new Map();
  let r = 0;
  marks.forEach((c, i) => {
    if (i === 0 || swaps(c, marks[i - 1])) ++r;
    else if (swaps(marks[i - 1], c)) throw new Error('classes out of order at ' + hex(c));
    rank.set(c, r);
  });
  if (r > 255) throw new Error('more than 255 combining classes');
  // Runs of consecutive code points with one rank.
  const runs = [];
  [...rank.keys()].sort((a, b) => a - b).forEach((c) => {
    const last = runs[runs.length - 1];
    if (last && last[1] === c - 1 && last[2] === rank.get(c)) last[1] = c;
    else runs.push([c, c, rank.get(c)]);
  });
  emit({type: 'RankRange', id: 'kCombiningRank'}, runs, 6,
       'Non-starters: {first, last, rank}; ranks order as canonical combining classes do.');
  return rank;
}

// Full canonical decompositions (Hangul syllables are algorithmic), and the
// canonical compositions: the pairs (x, y) whose composite NFC keeps.
function decompositionTables(rank) {
  const rows = [];
  const data = [];
  const pairs = [];
  for (let c = 0; c < kMax; ++c) {
    if (isSurrogate(c) || isHangulSyllable(c)) continue;
    const d = cps(str(c).normalize('NFD'));
    if (same(d, [c])) continue;
    rows.push([c, data.length, d.length]);
    data.push(...d);
    if (str(c).normalize('NFC') !== str(c)) continue; // singleton or excluded
    // The composite's own decomposition is (x, y) with y one of d's code
    // points and x what the rest composes to.
    let pair = null;
    for (let i = d.length - 1; i > 0 && !pair; --i) {
      const x = cps(str(...d.slice(0, i), ...d.slice(i + 1)).normalize('NFC'));
      if (x.length === 1 && str(x[0], d[i]).normalize('NFC') === str(c)) pair = [x[0], d[i], c];
    }
    if (!pair) throw new Error('no composition pair for ' + hex(c));
    if (rank.has(pair[0])) throw new Error('composition from a non-starter at ' + hex(c));
    pairs.push(pair);
  }
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  emit({type: 'Decomposition', id: 'kDecompositions'}, rows, 4,
       'Full canonical decomposition: {cp, offset into kDecompositionData, length}.');
  const lines = ['/// The decompositions\' code points, back to back.',
                 'static constexpr char32_t kDecompositionData[] = {'];
  for (let i = 0; i < data.length; i += 10)
    lines.push('    ' + data.slice(i, i + 10).map((x) => hex(x) + ',').join(' '));
  lines.push('};', '');
  console.log(lines.join('\n'));
  emit({type: 'Composition', id: 'kCompositions'}, pairs, 4,
       'Canonical compositions {first, second, composite}, sorted by (first, second).');
}

const header = (name) => `//===- ${name} - Generated Unicode tables ${'-'.repeat(Math.max(1, 44 - name.length))}*- C++ -*-===//
//
// GENERATED by runtime/gen_unicode_tables.js from Node ${process.version}
// (Unicode ${process.versions.unicode}). Do not edit; rerun the script instead.
`;

if (process.argv[2] === 'nfc') {
  console.log(header('unicode_nfc_tables.inc') + `// Included by unicode_nfc.cpp only. Every table is sorted by its first field.
//
//===----------------------------------------------------------------------===//
`);
  decompositionTables(combiningRanks());
  process.exit(0);
}

console.log(`//===- unicode_tables.inc - Generated Unicode property tables ----*- C++ -*-===//
//
// GENERATED by runtime/gen_unicode_tables.js from Node ${process.version}
// (Unicode ${process.versions.unicode}). Do not edit; rerun the script instead.
// Included by unicode.cpp only. Range tables are sorted and disjoint.
//
//===----------------------------------------------------------------------===//
`);
emitRanges('kLetter', /\p{L}/u, 'General category L (letters): GPT-2 regex \\p{L}.');
emitRanges('kNumber', /\p{N}/u, 'General category N (numbers): GPT-2 regex \\p{N}.');
emitRanges('kJsSpace', /\s/u, 'JavaScript \\s (WhiteSpace + LineTerminator), as the reference encoder uses it.');
emitRanges('kPunctuation', /\p{P}/u, 'General category P (punctuation).');
emitRanges('kOther', /\p{C}/u, 'General category C (Cc, Cf, Cs, Co, Cn).');
emitRanges('kSpaceSeparator', /\p{Zs}/u, 'General category Zs (space separators).');
emitRanges('kNonspacingMark', /\p{Mn}/u, 'General category Mn (nonspacing marks).');
lowerTables();
stripTable();
