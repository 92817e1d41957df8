/**
 * The audit's YAML fast path (lib/audit/plain_yaml.ts, issue 24 item 5) is sound: over generated
 * front matters built from the characters that split readings (quotes, `#`, `: `, `---`, tabs,
 * CR, block and flow syntax, anchors, `&*!|>%@\``, Unicode separators, duplicate keys, words YAML
 * reads as booleans or null), wherever it answers, the strict reader's tree it builds equals the
 * parser's (places included, no finding), and the flat map it gives equals each full host
 * model's reading: the `yaml` package's `parse` (Claude Code 2.1.42 under Node), the Bun model's
 * settings, the Copilot CLI model's strict settings. It declines the rest.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments, parseDocument } from "yaml";
import fc from "../_helpers/fc.ts";
import { plainColonError, plainFlatMap, plainLines } from "../../lib/audit/plain_yaml.ts";
import { composeOnce } from "../../lib/audit/yaml_once.ts";
import { parsedYaml, plainTree, readYaml } from "../../lib/audit/yaml_tree.ts";
import { bunYamlParse } from "../../lib/audit/hosts/bun_yaml.ts";
import { claudeFrontMatter } from "../../lib/audit/hosts/claude.ts";
import { writeAuditCorpus } from "../../scripts/bench/audit_corpus.ts";
import { agentFile } from "./_fm_gen.ts";

const KEYS = [
  "name",
  "description",
  "tools",
  "model",
  "memory",
  "color",
  "a-b",
  "_x",
  "null",
  "true",
  "Yes",
  "~",
  "<<",
  "tools ",
  "1",
  "-x",
];
const BITS = [
  "it's",
  'a "b"',
  "café — 😀",
  "https://x.y/z",
  "C#",
  "a!?<>|~%@`=+;$^\\",
  "Read",
  "Read, Grep",
  "Bash(git:*)",
  "code",
  " ",
  "  ",
  ",",
  ".",
  "/",
  "(",
  ")",
  "*",
  "-",
  "_",
  "\\n",
  '\\"',
  "\\\\",
  "\\t",
  "''",
  "#",
  " #",
  ": ",
  ":",
  "'",
  '"',
  "\\",
  "\\x41",
  "\\/",
  "\t",
  "\r",
  "---",
  "...",
  "&x",
  "*x",
  "!",
  "!!str ",
  "|",
  ">",
  "%",
  "@",
  "`",
  "[",
  "]",
  "{",
  "}",
  "?",
  "0",
  "12",
  "0x1F",
  "true",
  "null",
  "~",
  "yes",
  "é",
  "—",
  "😀",
  "\u00a0",
  "\u0085",
  "\u2028",
  "\ufeff",
  "\ud800",
  "\u0001",
  "\u007f",
];
/** Mostly the words the fast path takes, sometimes a bit that splits readings among them. */
const word: fc.Arbitrary<string> = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...BITS.slice(0, 25)) },
    { weight: 1, arbitrary: fc.constantFrom(...BITS) },
  ),
  { minLength: 0, maxLength: 4 },
).map((xs) => xs.join(""));
/** A value: words, often plain, sometimes quoted, sometimes with trailing blanks. */
const value: fc.Arbitrary<string> = fc.tuple(
  fc.constantFrom("", "", "'", '"'),
  word,
  fc.constantFrom("", "", "  ", "\t"),
).map(([q, w, tail]) => `${q}${w}${q}${tail}`);
/** A line: mostly `key: value`, sometimes a blank, an indented or an odd line. */
const line: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...KEYS.slice(0, 8)) },
        { weight: 1, arbitrary: fc.constantFrom(...KEYS) },
      ),
      fc.constantFrom(": ", ": ", ":", ":  ", " : "),
      value,
    )
      .map(([k, sep, v]) => `${k}${sep}${v}`),
  },
  { weight: 1, arbitrary: fc.constantFrom("", "   ", "---", "...", "  - Read", "\t") },
  { weight: 1, arbitrary: word.map((w) => `#${w}`) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom("  ", "- ", "? "), word).map(([a, b]) => a + b),
  },
);
/** A list's item: mostly a tool's name, sometimes a word of bits, quoted or not. */
const item: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom("Read", "Grep", "Bash(git:*)", "'edit'", '"*"', "mcp__x__y"),
  },
  { weight: 1, arbitrary: value },
);
/** A key and a list: `- item` lines (an indentation each, sometimes uneven) or `[a, b]`. */
const list: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(
    fc.constantFrom("tools", "model", "x"),
    fc.constantFrom(":", ":  "),
    fc.array(
      fc.tuple(
        fc.constantFrom("  ", "  ", "    ", " ", ""),
        fc.constantFrom("- ", "-  ", "-"),
        item,
      ),
      {
        minLength: 1,
        maxLength: 4,
      },
    ),
  ).map(([k, c, xs]) => [`${k}${c}`, ...xs.map(([i, d, x]) => `${i}${d}${x}`)].join("\n")),
  fc.tuple(
    fc.constantFrom("tools", "x"),
    fc.array(fc.tuple(fc.constantFrom("", " ", "  "), item, fc.constantFrom("", " ")), {
      minLength: 0,
      maxLength: 4,
    }),
    fc.constantFrom("]", "]", " ]", ",]", "]  ", "] x"),
  ).map(([k, xs, close]) => `${k}: [${xs.map(([a, x, b]) => a + x + b).join(",")}${close}`),
);
/** A line whose value holds `: ` among other bits (what sends Claude Code to its retry). */
const colonLine: fc.Arbitrary<string> = fc.tuple(
  fc.constantFrom("description", "tools", "name", "x"),
  word,
  fc.constantFrom(": ", " : ", ":  ", "::", ": :", ": #"),
  word,
).map(([k, a, c, b]) => `${k}: ${a.replace(/^[^A-Za-z]+/, "")}${c}${b}`);
/** A front matter's YAML text (as the strict reader and the models get it). */
const yamlText: fc.Arbitrary<string> = fc.tuple(
  fc.array(
    fc.oneof({ weight: 4, arbitrary: line }, { weight: 2, arbitrary: colonLine }, {
      weight: 2,
      arbitrary: list,
    }),
    {
      minLength: 0,
      maxLength: 5,
    },
  ),
  fc.constantFrom("\n", "\n", ""),
).map(([ls, end]) => ls.join("\n") + end);

/** The `yaml` package's `parse` (Claude Code 2.1.42 under Node). */
function yamlPackage(text: string): unknown {
  try {
    return { ok: parse(text, { logLevel: "error" }) ?? null };
  } catch {
    return "refused";
  }
}

/** The Bun model's settings, parsed in full. */
function bunSettings(text: string): unknown {
  try {
    const docs = parseAllDocuments(text, {
      version: "1.2",
      schema: "core",
      merge: true,
      uniqueKeys: false,
      prettyErrors: false,
    });
    const list = Array.isArray(docs) ? docs : [];
    if (list.length !== 1 || list[0].errors.length > 0) return "refused or several";
    return { ok: list[0].toJS({ maxAliasCount: 100 }) };
  } catch {
    return "refused";
  }
}

/** The Copilot CLI model's settings, parsed in full. */
function copilotSettings(text: string): unknown {
  const doc = parseDocument(text, { version: "1.2", uniqueKeys: true, merge: false });
  return doc.errors.length > 0 ? "refused" : { ok: doc.toJS({ maxAliasCount: 100 }) };
}

/** Asserts every full reading refuses `text` (the fast path says it fails). */
function refusedByAll(text: string): void {
  const why = JSON.stringify(text);
  const c = composeOnce(text);
  assert.ok(c.thrown === undefined && c.docs.length === 1 && c.docs[0].errors.length > 0, why);
  assert.equal(yamlPackage(text), "refused", why);
  assert.equal(copilotSettings(text), "refused", why);
  assert.notEqual(typeof bunSettings(text), "object", why);
  assert.ok(parsedYaml(text, 2).spots.some((s) => s.code === "YAML_SYNTAX"), why);
  assert.equal(plainFlatMap(text), null, why);
}

let refusals = 0;
let answered = 0;
let declined = 0;
let trees = 0;
let lists = 0;

/** Asserts the fast path agrees with every full reading of `text` wherever it answers. */
function agrees(text: string): void {
  if (plainColonError(text)) {
    refusals++;
    refusedByAll(text);
  }
  const map = plainFlatMap(text);
  const tree = plainTree(text, 2);
  // The tree is built from the same scan: it may decline more (a comment after a null last
  // value), never less.
  assert.ok(tree === null || map !== null, JSON.stringify(text));
  if (map === null) {
    declined++;
    return;
  }
  answered++;
  for (
    const [who, reading] of [
      ["the yaml package", yamlPackage(text)],
      ["the Bun model's settings", bunSettings(text)],
      ["the Copilot CLI model's settings", copilotSettings(text)],
    ] as const
  ) {
    assert.deepEqual({ ok: map }, reading, `${JSON.stringify(text)}: ${who}`);
  }
  // And the Bun model itself answers the same (its checks run before the fast path).
  assert.deepEqual(bunYamlParse(text), { ok: true, value: map }, JSON.stringify(text));
  if (tree === null) return;
  trees++;
  if (tree.pairs.some((p) => p.value?.kind === "seq")) lists++;
  const full = parsedYaml(text, 2);
  assert.deepEqual(
    full.spots,
    [],
    `${JSON.stringify(text)}: the parser finds ${full.spots[0]?.code}`,
  );
  assert.deepEqual(tree, full.root, JSON.stringify(text));
  // The strict reader takes the fast path for it.
  assert.deepEqual(readYaml(text, 2), { root: tree, spots: [], text });
}

Deno.test("the fast path answers as every full reading does, over generated front matters", () => {
  answered = 0;
  declined = 0;
  trees = 0;
  lists = 0;
  refusals = 0;
  fc.assert(fc.property(yamlText, agrees), { numRuns: 30_000, seed: 245 });
  assert.ok(refusals > 500, `refusals ${refusals}`);
  assert.ok(lists > 300, `lists ${lists}`);
  // It proved something both ways: it answered often, and declined often.
  assert.ok(answered > 900 && trees > 900, `answered ${answered}, trees ${trees}`);
  assert.ok(declined > 5000, `declined ${declined}`);
});

Deno.test("the fast path answers as every full reading does, for agent files and the bench corpus", () => {
  answered = 0;
  declined = 0;
  refusals = 0;
  fc.assert(
    fc.property(agentFile, (file) => {
      const fm = claudeFrontMatter(file, true);
      if (fm !== null) agrees(fm);
    }),
    { numRuns: 3000, seed: 246 },
  );
  const tmp = Deno.makeTempDirSync();
  try {
    for (const fm of writeAuditCorpus(tmp, 300)) agrees(fm);
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
  assert.ok(answered > 300 && declined > 300, `answered ${answered}, declined ${declined}`);
  assert.ok(refusals > 100, `refusals ${refusals}`);
});

Deno.test("the fast path declines what some reading reads apart", () => {
  for (
    const t of [
      "tools: Read # x\n",
      "tools: Read\ntools: Edit\n",
      "null: x\n",
      "tools: true\n",
      "tools: [Read,]\n",
      "tools: [a b]\n",
      "tools: [Read] x\n",
      "tools:\n- Read\n",
      "tools:\n  - Read\n   - Edit\n",
      "tools:\n  - Read # c\n",
      "tools: 'it's'\n",
      'tools: "a\\x41"\n',
      'tools: "a\\/"\n',
      "tools: Read\n  # c\n",
      "tools: Read\r\n",
      "\ttools: Read\n",
      "tools: Read\n  Edit\n",
      "tools: 'a\u2028b'\n",
      "description: a: b\n",
      "",
      "\n\n",
    ]
  ) {
    assert.equal(plainLines(t), null, JSON.stringify(t));
  }
  // A null last value with a comment after it: the map is plain, the tree is the parser's.
  assert.deepEqual(plainFlatMap("name: w\ncolor:\n# c\n"), { name: "w", color: null });
  assert.equal(plainTree("name: w\ncolor:\n# c\n", 2), null);
  // Lists of one-line scalars: block and flow.
  assert.deepEqual(plainFlatMap("tools:\n  - Read\n  - 'Edit'\nx: [a, \"b\"]\n"), {
    tools: ["Read", "Edit"],
    x: ["a", "b"],
  });
  assert.deepEqual(plainFlatMap("name: w\ntools: Read, Grep\ncolor:\n"), {
    name: "w",
    tools: "Read, Grep",
    color: null,
  });
});
