// UnicodeNfcReference.js - writes UnicodeNfcReference.json
//
// Expected NFC of texts for UnicodeNfcTest.cpp, produced once by V8's
// String.prototype.normalize (ICU), so the tests need no node:
//   - every code point that NFD changes (a sample of the Hangul syllables), alone and as its NFD (which NFC must
//     compose back unless the code point is a singleton or excluded);
//   - random texts over starters, composites, Hangul jamo and syllables and
//     marks of many combining classes, which exercise canonical reordering
//     and blocking.
//
//   node tests/unit/runtime/UnicodeNfcReference.js \
//     > tests/unit/runtime/UnicodeNfcReference.json
'use strict';

const cases = [];
const add = (text) => cases.push([text, text.normalize('NFC')]);
for (let c = 0; c < 0x110000; ++c) {
  if (c >= 0xd800 && c <= 0xdfff) continue;
  // Hangul syllables are arithmetic: a sample of them is enough.
  if (c >= 0xac00 && c <= 0xd7a3 && (c - 0xac00) % 53 !== 0 && c !== 0xd7a3) continue;
  const s = String.fromCodePoint(c);
  const d = s.normalize('NFD');
  if (d === s) continue;
  add(s);
  add(d);
}
const pool = [
  'a', 'e', 'o', 'u', 'A', 'E', 's', 'S', 'i', 'y', 'z', ' ', '\u03b1', '\u03c9', '\u0391',
  '\u0435', '\u0418', '\u0627', '\u0915', '\u09c7', '\u0b47', '\u0dd9', '\u1025', '\u1b05',
  '\u1100', '\u1112', '\u1161', '\u1175', '\u11a8', '\u11c2', '\u11a7', '\uac00', '\uac01',
  '\ud7a3', '\u00c5', '\u212b', '\u1e69', '\u1ea0', '\u0344', '\u0f73', '\u1f82', '\ufb2c',
  '\u2126', '\u0958', '\u2adc', '\u00e9', '\u01d5', '\u0300', '\u0301', '\u0302', '\u0303',
  '\u0306', '\u0307', '\u0308', '\u030a', '\u030c', '\u0313', '\u0314', '\u0316', '\u031b',
  '\u0323', '\u0327', '\u0328', '\u0331', '\u0334', '\u0338', '\u0342', '\u0345', '\u035c',
  '\u035d', '\u05b0', '\u05b4', '\u05bc', '\u05c1', '\u0653', '\u0654', '\u0655', '\u093c',
  '\u09be', '\u09d7', '\u0b3e', '\u0b56', '\u0b57', '\u0dca', '\u0dcf', '\u0ddf', '\u102e',
  '\u1b35', '\u0f71', '\u0f72', '\u0f74', '\u0f80', '\u302a', '\u302e', '\u3099', '\u309a',
  '\u304b', '\u30cf', '\u1d165', '\u{1d165}', '\u{1d16e}', '\u{11131}', '\u{11127}',
  '\u{1d15e}', '\u{110ab}', '\u{110ba}', '\ud55c', '\u4e2d', '\u{1f600}', '!', '\n',
];
let seed = 20261126;
const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
for (let t = 0; t < 2000; ++t) {
  let text = '';
  for (let n = 1 + (next() % 10); n > 0; --n)
    text += pool[next() % pool.length];
  add(text);
}
process.stdout.write(
    JSON.stringify({source: `String.prototype.normalize('NFC') on node ${process.version} ` +
                            `(Unicode ${process.versions.unicode})`, cases})
        .replace(/\],\[/g, '],\n[') +
    '\n');
