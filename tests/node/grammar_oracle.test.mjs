// tandem's grammar masks against XGrammar (@mlc-ai/web-xgrammar, compiled to WebAssembly) on the
// real 262k-token Gemma vocabulary, along walks through valid documents; every completed walk of a
// JSON-schema grammar is validated by ajv against the schema.
//
// The tool GRAMMAR_MASKS (tests/grammar_oracle/grammar_masks.cpp) prints tandem's mask before each
// token of a walk. XGrammar replays the same tokens on the same grammar text and its masks must be
// identical, bit for bit. Both sides see the same vocabulary: tokens a grammar never produces
// (control, unused, markup) are given to XGrammar as empty strings, which it treats as special
// (never allowed), and the stop tokens are tandem's end-of-generation ids.
//
// Dialect mapping GBNF -> XGrammar EBNF: the grammars here are written in the common subset, so the
// text is passed unchanged. The subset: `::=` rules, "literals", [classes] with ranges, negation,
// \xHH / \uHHHH / \UHHHHHHHH escapes, ( ) groups, * + ? {m} {m,} {m,n}, # comments. Where the
// dialects differ: GBNF allows an empty alternative (`a ::= | "x"`), XGrammar needs `""`, so
// tandem's schema compiler always writes `""`; GBNF's `.` (any character) has no XGrammar form and
// is not used here; XGrammar reads a raw non-ASCII character inside a class as its UTF-8 bytes
// (so [α-ω] means bytes there), and this build rejects "ου" for [\u03B1-\u03C9]+ too
// (Testings.isGrammarAcceptString), so the grammars here use non-ASCII only through negated
// classes, which agree; tandem's Unicode classes are covered by its unit tests. XGrammar's lookahead assertions `(= ...)` and tag dispatch have no GBNF form.
//
// One difference is not a dialect one: XGrammar decodes UTF-8 leniently (it takes C0, C1 and
// F5-F7 as lead bytes, and accepts some stray continuation bytes), so the 128 byte tokens
// <0x80>..<0xFF> are left out of the comparison; for them (and every other token) the tool checks
// each mask against token-by-token matching (--verify), and the test requires no difference.
//
// Walks are few and short so that the test costs about a minute (most of it is XGrammar's
// per-grammar compilation over 262k tokens in WebAssembly).
//
// Run through ctest (grammar_oracle), which sets GRAMMAR_MASKS and TOKENIZER_JSON.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const require = createRequire(import.meta.url);
const tool = process.env.GRAMMAR_MASKS;
const tokenizerJson = process.env.TOKENIZER_JSON;
const skip = !tool || !tokenizerJson ? 'GRAMMAR_MASKS / TOKENIZER_JSON not set (run through ctest)'
  : !existsSync(tokenizerJson) ? `${tokenizerJson} is missing (npm ci in tests/node)` : false;
const work = mkdtempSync(join(tmpdir(), 'tandem-grammar-oracle-'));

// The package says "type": "module" but ships a UMD bundle: load a .cjs copy.
function loadXGrammar() {
  const src = require.resolve('@mlc-ai/web-xgrammar/lib/index.js');
  const copy = join(work, 'xgrammar.cjs');
  copyFileSync(src, copy);
  return require(copy);
}

function runTool(args) {
  const out = join(work, `out-${Math.random().toString(36).slice(2)}.json`);
  execFileSync(tool, ['--tokenizer', tokenizerJson, '--out', out, '--verify', ...args], { stdio: 'inherit' });
  return JSON.parse(readFileSync(out, 'utf8'));
}

let vocabCache = null;
function vocab() {
  if (!vocabCache) {
    const path = join(work, 'vocab.json');
    runTool(['--json-object', '--print-vocab', path]);
    vocabCache = JSON.parse(readFileSync(path, 'utf8'));
  }
  return vocabCache;
}

let xgCache = null;
async function xgrammar() {
  if (!xgCache) {
    const xg = loadXGrammar();
    const v = vocab();
    const info = await xg.TokenizerInfo.createTokenizerInfo(v.tokens, 'byte_fallback', false,
      v.tokens.length, v.stop_ids);
    xgCache = { xg, compiler: await xg.GrammarCompiler.createGrammarCompiler(info) };
  }
  return xgCache;
}

// Token ids of the byte tokens <0x80>..<0xFF> (see the header).
function highByteTokens() {
  return vocab().tokens.flatMap((t, i) => (/^<0x[89A-F][0-9A-F]>$/.test(t) ? [i] : []));
}

function clearBits(buf, ids) {
  for (const i of ids) buf[i >> 3] &= ~(1 << (i & 7));
}

function diffIds(a, b, n) {
  const out = [];
  for (let i = 0; i < a.length * 8 && out.length < 8; ++i) {
    const x = (a[i >> 3] >> (i & 7)) & 1, y = (b[i >> 3] >> (i & 7)) & 1;
    if (x !== y) out.push(`${i}(${JSON.stringify(vocab().tokens[i])}: tandem ${x}, xgrammar ${y})`);
  }
  return out;
}

// Replays every walk of `result` in XGrammar and compares the masks.
async function compareWithXGrammar(result, label) {
  const { xg, compiler } = await xgrammar();
  const compiled = await compiler.compileGrammar(result.grammar, 'root');
  const n = vocab().tokens.length;
  const skipIds = highByteTokens();
  assert.equal(skipIds.length, 128);
  let compared = 0;
  for (const [w, walk] of result.walks.entries()) {
    const matcher = await xg.GrammarMatcher.createGrammarMatcher(compiled, vocab().stop_ids);
    for (const [i, step] of walk.steps.entries()) {
      assert.deepEqual(step.brute_force_diff, [], `${label} walk ${w} step ${i}: mask vs token-by-token matching`);
      const bitmask = await matcher.getNextTokenBitmask();
      const theirs = Buffer.from(Buffer.from(bitmask.buffer, bitmask.byteOffset, bitmask.byteLength).subarray(0, Math.ceil(n / 8)));
      const ours = Buffer.from(step.mask, 'base64').subarray(0, Math.ceil(n / 8));
      const padding = Array.from({ length: Math.ceil(n / 8) * 8 - n }, (_, k) => n + k);
      clearBits(theirs, [...skipIds, ...padding]);  // XGrammar's bits past n are not defined
      clearBits(ours, [...skipIds, ...padding]);
      if (!ours.equals(theirs)) {
        assert.fail(`${label} walk ${w} step ${i} (after ${JSON.stringify(walk.text.slice(0, 80))}...): ` +
          `masks differ at ${diffIds(ours, theirs, n).join(', ')}`);
      }
      compared++;
      if (i < walk.tokens.length) {
        assert.ok(matcher.acceptToken(walk.tokens[i]), `${label}: XGrammar rejects token ${walk.tokens[i]}`);
      }
    }
    matcher.dispose();
  }
  compiled.dispose();
  return compared;
}

const jsonGbnf = `root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\\"" ( [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= "" | " " | "\\n" [ \\t]{0,20}
`;

const schemas = {
  person: {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 12 },
      age: { type: 'integer', minimum: 0, maximum: 130 },
      email: { type: 'string', format: 'email' },
      tags: { type: 'array', items: { enum: ['a', 'b', 'c d'] }, minItems: 1, maxItems: 3 },
      nick: { type: ['string', 'null'] },
    },
    required: ['name', 'age', 'tags'],
    additionalProperties: false,
  },
  formats: {
    type: 'object',
    properties: {
      day: { type: 'string', format: 'date' },
      at: { type: 'string', format: 'date-time' },
      id: { type: 'string', format: 'uuid' },
      code: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' },
      score: { type: 'number', minimum: 0 },
      delta: { type: 'integer', minimum: -40, exclusiveMaximum: 1000 },
    },
    required: ['day', 'at', 'id', 'code', 'score', 'delta'],
    additionalProperties: false,
  },
  tree: {
    $defs: {
      node: {
        type: 'object',
        properties: { v: { const: 1 }, kids: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 2 } },
        required: ['v'],
      },
    },
    anyOf: [{ $ref: '#/$defs/node' }, { type: 'boolean' }],
  },
};

describe('grammar masks vs XGrammar on the Gemma vocabulary', { skip, timeout: 900000 }, () => {
  test('JSON grammar: a document and random walks', async () => {
    const doc = join(work, 'doc.json');
    writeFileSync(doc, '{"name": "Ada \\"L\\" 😀", "tags": ["x", 1.5e3, -0.25, true, null],\n  "nested": {"a": [], "b": {}}}');
    const result = runTool(['--grammar', writeGrammar(jsonGbnf), '--document', doc,
      '--random-walks', '2', '--steps', '30', '--seed', '7']);
    assert.equal(result.walks[0].rejected_at, undefined, 'the document follows the grammar');
    assert.ok(await compareWithXGrammar(result, 'json') > 30);
  });

  test('a small grammar with a negated class and counted repetition', async () => {
    const g = `root ::= item ("," item){0,3} "."
item ::= [a-c]+ | "<" [^>\\n]{1,4} ">" | [0-9]{2}
`;
    const result = runTool(['--grammar', writeGrammar(g), '--random-walks', '3', '--steps', '24', '--seed', '3']);
    assert.ok(await compareWithXGrammar(result, 'small') > 15);
  });

  for (const [name, schema] of Object.entries(schemas)) {
    test(`JSON schema "${name}": masks match and completed outputs validate (ajv)`, async () => {
      const path = join(work, `${name}.schema.json`);
      writeFileSync(path, JSON.stringify(schema));
      const result = runTool(['--json-schema', path, '--random-walks', '3', '--steps', '140', '--seed', '11']);
      await compareWithXGrammar(result, name);
      const ajv = new Ajv({ strict: false });
      addFormats(ajv);
      const validate = ajv.compile(schema);
      let completed = 0;
      for (const walk of result.walks) {
        if (!walk.complete) continue;
        completed++;
        const value = JSON.parse(walk.text);
        assert.ok(validate(value), `${name}: ${walk.text} fails: ${JSON.stringify(validate.errors)}`);
      }
      assert.ok(completed >= 1, `${name}: no walk completed`);
    });
  }
});

function writeGrammar(text) {
  const path = join(work, `g-${Math.random().toString(36).slice(2)}.gbnf`);
  writeFileSync(path, text);
  return path;
}
