// TokenizerLlama3Reference.js - writes TokenizerLlama3Reference.json
//
// The expected pre-tokenizer pieces of Llama 3's and Qwen2's tokenizer.json
// Split regexes for TokenizerHfJsonTest.cpp, produced once by V8's regex
// engine (Unicode property classes with the u flag), so the tests need no
// node. JavaScript has no (?i:...) group: the contractions are spelled with
// both cases instead, which matches the same strings.
//
//   node tests/unit/runtime/TokenizerLlama3Reference.js \
//     > tests/unit/runtime/TokenizerLlama3Reference.json
'use strict';

const contractions = "'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]";
const rest = (digits) => `|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}${
    digits}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const llama3 = new RegExp(contractions + rest('{1,3}'), 'gu');
const qwen2 = new RegExp(contractions + rest(''), 'gu');

const texts = [
  'Hello world',
  'Hello, world!',
  "I'm sure you'll see it's John's car; they've said we'd go.",
  "DON'T SHOUT, I'M HERE",
  'Numbers: 1234567 and 3.14159, 2024-11-26',
  'x  y   z    ',
  'line one\nline two\r\n\r\nline three\n\n',
  '  leading and trailing  ',
  '"quoted" (parens) [brackets]',
  'tabs\there\tand  \t mixed',
  'naïve café résumé',
  'Ελληνικά и русский',
  '中文测试，标点。',
  'emoji 😀👍 and 🇫🇷 flags',
  '...!!!???',
  'a\u00a0b\u2003c',
  "it's'S'LL'Ve",
  '١٢٣ ٤٥٦',
  '½ ¾ ⅓',
  'email@example.com http://x.y/z?q=1&r=2',
  '\n\n\n',
  '   \n   \n   x',
  'end with space ',
];
// Random strings over the classes the regexes tell apart, from a fixed LCG.
const pool = [
  'a', 'Z', 'é',  'ж',   '中', ' ', '  ', '\n', '\r\n', '\t',     '0',      '7', '٣',
  '½', "'", "'s", "'LL", '.',  ',', '!',  '-',  '😀',    '\u00a0', '\u2003', '"'
];
let seed = 12345;
const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
for (let t = 0; t < 120; ++t) {
  let text = '';
  for (let n = next() % 24; n > 0; --n)
    text += pool[next() % pool.length];
  texts.push(text);
}
const cases = texts.map((text) => ({
                          text,
                          llama3 : text.match(llama3) || [],
                          qwen2 : text.match(qwen2) || [],
                        }));
process.stdout.write(
    JSON.stringify({source : `V8 regex on node ${process.version}`, cases}, null, 0)
        .replace(/\{"text"/g, '\n {"text"') +
    '\n');
