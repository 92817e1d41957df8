/**
 * Differential test of `lib/pycompat/pyre.ts` against CPython's own `re` (python3 on this machine;
 * the tool never needs it, only this test does, and the test fails, never skips, without it).
 *
 * Patterns come from a grammar that covers the translated constructs and the tricky ones
 * (empty-matching branches under quantifiers, nested quantifiers, alternations, classes, anchors,
 * escapes, inline flags, and the constructs that are refused); arguments are drawn from each
 * pattern (so many of them match) and then mutated, plus fixed strings such as `-rf`, newlines,
 * non-ASCII, astral and lone-surrogate ones. For each pattern:
 *
 * - when CPython refuses to compile it, or warns (a FutureWarning that its meaning will change),
 *   `compileArgPattern` must refuse it too;
 * - otherwise `compileArgPattern` either refuses it (`POLICY_LINT`: fail closed) or agrees with
 *   `re.fullmatch(p, a) is not None` on every argument.
 *
 * One python3 process answers every case (tests/policy/fixtures/pyre_oracle.py, JSON lines on
 * stdin and stdout). `PYRE_DIFF_SEED` and `PYRE_DIFF_RUNS` replay or widen a run; the seed is
 * printed with every failure.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { PolicyError } from "../../lib/errors.ts";
import { compileArgPattern } from "../../lib/pycompat/pyre.ts";
import {
  PY_DIGIT,
  PY_SPACE,
  PY_UNICODE_VERSION,
  PY_WORD,
} from "../../lib/pycompat/pyre_unicode.ts";

// ---------------------------------------------------------------------------------------------
// The oracle: one python3 process, one JSON line per request.

interface Verdict {
  readonly error?: string;
  readonly v?: string;
  readonly warn?: readonly string[];
  readonly timeout?: boolean;
  readonly crash?: string;
}

class Oracle {
  readonly python: string;
  readonly unicode: string;
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";

  private constructor(
    child: Deno.ChildProcess,
    reader: ReadableStreamDefaultReader<string>,
    header: { python: string; unicode: string },
    buffer: string,
  ) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#reader = reader;
    this.python = header.python;
    this.unicode = header.unicode;
    this.#buffer = buffer;
  }

  static async start(): Promise<Oracle> {
    const script = new URL("./fixtures/pyre_oracle.py", import.meta.url).pathname;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command("python3", {
        args: ["-I", "-X", "utf8", script],
        stdin: "piped",
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
    } catch (cause) {
      throw new Error(
        "this test needs python3 on PATH: CPython's re is the reference the argument-pattern " +
          `translator is checked against (${String(cause)})`,
        { cause },
      );
    }
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const first = await Oracle.#readLine(reader, "");
    return new Oracle(child, reader, JSON.parse(first.line), first.rest);
  }

  static async #readLine(
    reader: ReadableStreamDefaultReader<string>,
    buffer: string,
  ): Promise<{ line: string; rest: string }> {
    for (;;) {
      const nl = buffer.indexOf("\n");
      if (nl >= 0) return { line: buffer.slice(0, nl), rest: buffer.slice(nl + 1) };
      const { value, done } = await reader.read();
      if (done) throw new Error("the python3 oracle exited early (see its stderr above)");
      buffer += value;
    }
  }

  async ask<T>(request: unknown): Promise<T> {
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
    const { line, rest } = await Oracle.#readLine(this.#reader, this.#buffer);
    this.#buffer = rest;
    return JSON.parse(line) as T;
  }

  verdict(pattern: string, args: readonly string[]): Promise<Verdict> {
    return this.ask<Verdict>({ p: pattern, a: args });
  }

  async close(): Promise<void> {
    await this.#writer.close();
    for (;;) {
      const { done } = await this.#reader.read();
      if (done) break;
    }
    const status = await this.#child.status;
    assert.equal(status.code, 0, "the python3 oracle failed");
  }
}

/** Our verdict: the compiled pattern, or the refusal. */
function ours(pattern: string): RegExp | PolicyError {
  try {
    return compileArgPattern(pattern);
  } catch (e) {
    if (e instanceof PolicyError && e.code === "POLICY_LINT") return e;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// The pattern grammar. Each node knows its Python text and how to draw strings it (likely) matches.

type Node =
  | { readonly k: "text"; readonly src: string; readonly draws: readonly string[] }
  | { readonly k: "seq"; readonly items: readonly Node[] }
  | { readonly k: "alt"; readonly branches: readonly Node[] }
  | { readonly k: "group"; readonly open: string; readonly body: Node }
  | {
    readonly k: "rep";
    readonly body: Node;
    readonly q: string;
    readonly min: number;
    readonly max: number;
  };

const t = (src: string, ...draws: string[]): Node => ({ k: "text", src, draws });

interface Quant {
  readonly q: string;
  readonly min: number;
  readonly max: number;
}

/** Atoms: literals, escapes, categories, classes, anchors; each with strings it may match. */
const ATOMS: readonly Node[] = [
  t("a", "a"),
  t("b", "b"),
  t("r", "r"),
  t("f", "f"),
  t("-", "-"),
  t("x", "x", "X"),
  t("0", "0"),
  t("_", "_"),
  t(" ", " "),
  t("é", "é", "É"),
  t("ß", "ß"),
  t("😀", "😀"),
  t("٣", "٣"),
  t("\u{31350}", "\u{31350}"),
  t("{", "{"),
  t("}", "}"),
  t("]", "]"),
  t("\\.", "."),
  t("\\-", "-"),
  t("\\n", "\n"),
  t("\\t", "\t"),
  t("\\\\", "\\"),
  t("\\$", "$"),
  t("\\[", "["),
  t("\\{", "{"),
  t("\\x41", "A"),
  t("\\x2d", "-"),
  t("\\u00e9", "é"),
  t("\\U0001F600", "😀"),
  t("\\0", "\0"),
  t("\\101", "A"),
  t("\\a", "\x07"),
  t("\\v", "\v"),
  t("\\é", "é"),
  t(".", "a", "\n", "\r", "😀", "\u2028"),
  t("\\d", "0", "9", "٣", "\u{11F50}", "²", "x"),
  t("\\D", "a", "0", "\u{11F50}"),
  t("\\w", "a", "_", "é", "٣", "Ⅳ", "\u{31350}", "\u{1E030}", "-", "\u00b7"),
  t("\\W", "-", " ", "a", "\u{31350}", "\ud800"),
  t("\\s", " ", "\n", "\x1c", "\x85", "\u2028", "\ufeff", "\u200b", "a"),
  t("\\S", "a", " ", "\x1c"),
  t("[a-z0-9]", "a", "z", "5", "-", "A"),
  t("[^a-z]", "-", "a", "\n", "😀", "\ud800"),
  t("[\\w-]", "-", "a", "é", "\u{31350}"),
  t("[-a]", "-", "a"),
  t("[a-]", "-", "a"),
  t("[]a]", "]", "a"),
  t("[^]a]", "]", "b"),
  t("[\\d.]", ".", "1", "٣"),
  t("[^\\W\\d]", "a", "1", "_"),
  t("[\\s\\S]", "\n", "a"),
  t("[.$^]", ".", "$", "^"),
  t("[😀-😂]", "😁", "😃"),
  t("[\\x00-\\U0010FFFF]", "\ud800", "\u{10FFFF}", "\n"),
  t("[^\\n]", "\r", "\n"),
  t("[\\b]", "\b"),
  t("[\\n-\\r]", "\v", "\n"),
  t("[a[]", "["),
  t("[^[a]", "b"),
  t("[\\[]", "["),
  t("[^-]", "a", "-"),
  t("^", ""),
  t("$", "", "\n"),
  t("\\A", ""),
  t("\\Z", ""),
  t("\\b", ""),
];

/** Atoms that CPython rejects, warns about, or that are refused here. */
const ODD_ATOMS: readonly Node[] = [
  t("[+--]", "+", ","),
  t("[a&&b]", "&"),
  t("[a||b]", "|"),
  t("[a~~b]", "~"),
  t("[[a]", "[", "a"),
  t("[a-\\w]", "a"),
  t("[z-a]", "a"),
  t("[\\d-z]", "-"),
  t("[\\z]", "z"),
  t("[\\A]", "A"),
  t("\\z", ""),
  t("\\B", ""),
  t("\\1", "a"),
  t("(?P=g1)", "a"),
  t("(?(1)a|b)", "a", "b"),
  t("(?<=a)", ""),
  t("(?<!a)", ""),
  t("(?i:a)", "a", "A"),
  t("(?x:a b)", "ab"),
  t("\\N{DIGIT ONE}", "1"),
  t("(?#c)", ""),
  t("{1", "{1"),
  t("{}", "{}"),
  t("{,}", "{,}"),
  t("\\q", "q"),
  t("\\x4", "x4"),
  t(")", ")"),
  t("(", "("),
  t("*", "*"),
  t("(?s)", ""),
  t("(?a)", ""),
];

/** Quantifiers with the counts drawn for them (capped to keep arguments short). */
const QUANTS: readonly Quant[] = [
  { q: "*", min: 0, max: 3 },
  { q: "+", min: 1, max: 3 },
  { q: "?", min: 0, max: 1 },
  { q: "*?", min: 0, max: 3 },
  { q: "+?", min: 1, max: 3 },
  { q: "??", min: 0, max: 1 },
  { q: "{2}", min: 2, max: 2 },
  { q: "{0,2}", min: 0, max: 2 },
  { q: "{1,}", min: 1, max: 3 },
  { q: "{,2}", min: 0, max: 2 },
  { q: "{,}", min: 0, max: 3 },
  { q: "{0}", min: 0, max: 0 },
  { q: "{1,2}?", min: 1, max: 2 },
  { q: "{2,}?", min: 2, max: 3 },
];

/** Possessive (refused here) and invalid quantifiers. */
const ODD_QUANTS: readonly Quant[] = [
  { q: "*+", min: 0, max: 3 },
  { q: "++", min: 1, max: 3 },
  { q: "?+", min: 0, max: 1 },
  { q: "{1,2}+", min: 1, max: 2 },
  { q: "{0}+", min: 0, max: 0 },
  { q: "{2,1}", min: 1, max: 2 },
];

const GROUP_OPENS: readonly string[] = [
  "(?:",
  "(?:",
  "(?:",
  "(",
  "(",
  "(?P<g1>",
  "(?P<g2>",
  "(?=",
  "(?!",
  "(?s:",
  "(?a:",
  "(?u:",
  "(?m:",
  "(?-s:",
  "(?-m:",
  "(?a-m:",
  "(?sm:",
];

/** Groups refused here (atomic, non-ASCII names, `i`, `x`) or invalid in CPython. */
const ODD_OPENS: readonly string[] = [
  "(?>",
  "(?>",
  "(?P<é>",
  "(?P<a²>",
  "(?s-s:",
  "(?-a:",
  "(?au:",
  "(?i:",
  "(?x:",
];

const FLAG_PREFIXES: readonly string[] = ["(?s)", "(?m)", "(?a)", "(?u)", "(?sm)", "(?a)(?s)"];
const ODD_PREFIXES: readonly string[] = [
  "(?a)(?u)",
  "(?u)(?a)",
  "(?#c)(?s)",
  "(?i)",
  "(?x)",
  "(?L)",
];

const ANCHORS = new Set(["^", "$", "\\A", "\\Z", "\\z", "\\b", "\\B"]);

const atomArb: fc.Arbitrary<Node> = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom(...ATOMS) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD_ATOMS) },
);
const quantArb: fc.Arbitrary<Quant> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...QUANTS) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD_QUANTS) },
);
const openArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...GROUP_OPENS) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD_OPENS) },
);
const prefixArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 40, arbitrary: fc.constant("") },
  { weight: 8, arbitrary: fc.constantFrom(...FLAG_PREFIXES) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD_PREFIXES) },
);

/** A node at most `depth` levels deep, with at most `reps` more quantifiers nested inside. */
function nodeArb(depth: number, reps: number): fc.Arbitrary<Node> {
  if (depth === 0) return atomArb;
  const inner = nodeArb(depth - 1, reps);
  const options: fc.WeightedArbitrary<Node>[] = [
    { weight: 6, arbitrary: atomArb },
    {
      weight: 2,
      arbitrary: fc.array(inner, { minLength: 2, maxLength: 3 }).map((items) => ({
        k: "seq",
        items,
      })),
    },
    {
      weight: 3,
      arbitrary: fc.array(
        fc.oneof({ weight: 1, arbitrary: fc.constant(t("", "")) }, {
          weight: 4,
          arbitrary: inner,
        }),
        { minLength: 2, maxLength: 3 },
      ).map((branches) => ({ k: "alt", branches })),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(openArb, inner).map(([open, body]) => ({
        k: "group",
        open,
        body,
      })),
    },
  ];
  if (reps > 0) {
    const body = nodeArb(depth - 1, reps - 1);
    options.push({
      weight: 5,
      arbitrary: fc.tuple(body, quantArb).map(([b, q]) => ({
        k: "rep",
        body: b,
        ...q,
      })),
    });
  }
  return fc.oneof(...options);
}

function render(n: Node): string {
  switch (n.k) {
    case "text":
      return n.src;
    case "seq":
      return n.items.map(render).join("");
    case "alt":
      return n.branches.map(render).join("|");
    case "group":
      return `${n.open}${render(n.body)})`;
    case "rep": {
      // A quantified sequence, alternation, repeat or anchor is grouped (`(?:^)*` is valid
      // Python, `^*` is not); the soup below covers "multiple repeat" and "nothing to repeat".
      const bare = n.body.k === "group" || (n.body.k === "text" && !ANCHORS.has(n.body.src));
      const body = bare ? render(n.body) : `(?:${render(n.body)})`;
      return body + n.q;
    }
  }
}

/** Strings the node likely matches (a draw per choice point). */
function drawArb(n: Node): fc.Arbitrary<string> {
  switch (n.k) {
    case "text":
      return fc.constantFrom(...n.draws);
    case "seq":
      return fc.tuple(...n.items.map(drawArb)).map((parts) => parts.join(""));
    case "alt":
      return fc.oneof(...n.branches.map(drawArb));
    case "group":
      return n.open === "(?=" || n.open === "(?!" ? fc.constant("") : drawArb(n.body);
    case "rep":
      return fc.array(drawArb(n.body), { minLength: n.min, maxLength: n.max })
        .map((parts) => parts.join(""));
  }
}

const FIXED_ARGS: readonly string[] = [
  "",
  "-rf",
  "rf",
  "a-rf",
  "-",
  "\n",
  "a\n",
  "a",
  "é",
  "😀",
  "\ud800",
  "\u{31350}",
];

const MAX_ARG = 10;

function mutate(s: string, how: number, extra: string): string {
  const cps = Array.from(s);
  switch (how) {
    case 0:
      return s;
    case 1:
      return s + "\n";
    case 2:
      return "-" + s;
    case 3:
      return s + s;
    case 4:
      return cps.slice(0, -1).join("");
    case 5:
      return cps.slice(1).join("");
    case 6:
      return s + extra;
    default:
      return extra + s;
  }
}

const extraArb = fc.constantFrom("-rf", "\n", "é", "😀", "\u{31350}", "a", "_", " ", "\ud800");

interface Case {
  readonly pattern: string;
  readonly args: readonly string[];
}

const grammarCaseArb: fc.Arbitrary<Case> = fc.tuple(
  prefixArb,
  fc.array(nodeArb(3, 2), { minLength: 1, maxLength: 3 }),
).chain(([prefix, nodes]) => {
  const root: Node = { k: "seq", items: nodes };
  const arg = fc.tuple(drawArb(root), fc.integer({ min: 0, max: 8 }), extraArb)
    .map(([s, how, extra]) => Array.from(mutate(s, how, extra)).slice(0, MAX_ARG).join(""));
  return fc.array(arg, { minLength: 6, maxLength: 12 }).map((drawn) => ({
    pattern: prefix + render(root),
    args: [...new Set([...drawn, ...FIXED_ARGS])],
  }));
});

/** Raw character soup (as the recorded vectors use): mostly malformed, sometimes not. */
const SOUP = [
  "a",
  "b",
  "-",
  "r",
  "f",
  ".",
  "*",
  "+",
  "?",
  "|",
  "(",
  ")",
  "[",
  "]",
  "^",
  "$",
  "{",
  "}",
  ",",
  "1",
  "\\",
  "\\d",
  "\\w",
  "\\b",
  "(?:",
  "(?>",
  "(?=",
  "{1,2}",
  "{,1}",
  "é",
  "\n",
];
const soupCaseArb: fc.Arbitrary<Case> = fc.tuple(
  fc.array(fc.constantFrom(...SOUP), { minLength: 1, maxLength: 8 }),
  fc.array(
    fc.array(fc.constantFrom("a", "b", "-", "r", "f", "1", "é", "\n", "{", "}", ","), {
      maxLength: 6,
    }).map((cs) => cs.join("")),
    { minLength: 4, maxLength: 8 },
  ),
).map(([parts, args]) => ({
  pattern: parts.join(""),
  args: [...new Set([...args, ...FIXED_ARGS])],
}));

const caseArb: fc.Arbitrary<Case> = fc.oneof(
  { weight: 9, arbitrary: grammarCaseArb },
  { weight: 1, arbitrary: soupCaseArb },
);

// ---------------------------------------------------------------------------------------------

interface Stats {
  patterns: number;
  cpythonRefused: number;
  cpythonWarned: number;
  oursRefused: number;
  compared: number;
  comparisons: number;
  positives: number;
  timeouts: number;
}

function newStats(): Stats {
  return {
    patterns: 0,
    cpythonRefused: 0,
    cpythonWarned: 0,
    oursRefused: 0,
    compared: 0,
    comparisons: 0,
    positives: 0,
    timeouts: 0,
  };
}

async function check(oracle: Oracle, c: Case, stats: Stats): Promise<void> {
  stats.patterns++;
  const py = await oracle.verdict(c.pattern, c.args);
  if (py.timeout === true) {
    // CPython backtracked for seconds (nested quantifiers over empty-matching branches): no
    // verdict to compare, and JavaScript's backtracking may be as slow, so the case is skipped.
    stats.timeouts++;
    return;
  }
  const mine = ours(c.pattern);
  if (py.crash !== undefined) {
    // CPython compiled the pattern but its matcher raised (a CPython bug): no verdict to agree
    // with, so the only safe answer here is a refusal.
    stats.cpythonRefused++;
    assert.ok(
      mine instanceof PolicyError,
      `CPython's matcher fails on ${JSON.stringify(c.pattern)} (${py.crash}) but it compiles`,
    );
    return;
  }
  if (py.error !== undefined) {
    stats.cpythonRefused++;
    assert.ok(
      mine instanceof PolicyError,
      `CPython refuses ${JSON.stringify(c.pattern)} (${py.error}) but it compiles to /${
        mine instanceof RegExp ? mine.source : ""
      }/v`,
    );
    return;
  }
  if ((py.warn ?? []).length > 0) {
    stats.cpythonWarned++;
    assert.ok(
      mine instanceof PolicyError,
      `CPython warns on ${JSON.stringify(c.pattern)} (${py.warn?.join("; ")}) but it compiles`,
    );
    return;
  }
  if (mine instanceof PolicyError) {
    stats.oursRefused++;
    return;
  }
  stats.compared++;
  const verdicts = py.v ?? "";
  c.args.forEach((a, i) => {
    const expected = verdicts[i] === "1";
    stats.comparisons++;
    if (expected) stats.positives++;
    assert.equal(
      mine.test(a),
      expected,
      `pattern ${JSON.stringify(c.pattern)} on argument ${JSON.stringify(a)}: CPython says ${
        expected ? "match" : "no match"
      }, /${mine.source}/v says the opposite`,
    );
  });
}

function envInt(name: string): number | null {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw === "") return null;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${raw}`);
  return n;
}

/** The oracle's Unicode version must be the tables': a different one is a different reference. */
function assertSameUnicode(oracle: Oracle): void {
  assert.equal(
    oracle.unicode,
    PY_UNICODE_VERSION,
    `python3 is CPython ${oracle.python} with Unicode ${oracle.unicode}, but lib/policy/` +
      `pyre_unicode.ts holds Unicode ${PY_UNICODE_VERSION} tables; run this test with that ` +
      "CPython, or regenerate the tables (tests/policy/fixtures/gen_pyre_unicode.py) on purpose",
  );
}

function parseTable(table: string): [number, number][] {
  return table.split(",").map((part) => {
    const [lo, hi] = part.split("-").map((h) => parseInt(h, 16));
    return [lo, hi ?? lo];
  });
}

Deno.test("pyre: the Unicode tables are CPython's \\w, \\d and \\s, code point for code point", async () => {
  const oracle = await Oracle.start();
  try {
    assertSameUnicode(oracle);
    const py = await oracle.ask<Record<"w" | "d" | "s", [number, number][]>>({ tables: true });
    assert.deepEqual(parseTable(PY_WORD), py.w, "\\w");
    assert.deepEqual(parseTable(PY_DIGIT), py.d, "\\d");
    assert.deepEqual(parseTable(PY_SPACE), py.s, "\\s");
  } finally {
    await oracle.close();
  }
});

/** The probe's cases (issue 13, hole 4) and their neighbours, with arguments that tell them apart. */
const PINNED: readonly Case[] = [
  "(?:[a-z0-9]*|-rf)*+",
  "(?:[a-z0-9]*|-rf)++",
  "(?:[a-z0-9]*|-rf){0,3}+",
  "(?:|-rf)?+",
  "(?>[a-z0-9]*|-rf)*",
  "(?>(?:[a-z0-9]*|-rf)*)",
  "(?:((a)|b)(a*))*+",
  "(?:[a-z0-9]*|-rf)*",
  "(?:[a-z0-9]*|-rf)+",
  "(?:|-rf)*",
  "(?:a*)*b",
  "(?:a|)*?b",
  "(?:(?:a|)+)+",
  "(?:a?){2,}",
  "(?:(?=a)|a)*",
  "(?:(?!-)|-rf)*",
  String.raw`\w+`,
  String.raw`\d+`,
  String.raw`\W+`,
  String.raw`\s`,
  String.raw`\bx\b`,
  String.raw`[^\W\d]+`,
  String.raw`(?a)\w+`,
  "a$",
  "a$\\n",
  "(?m)a$\\n",
  String.raw`a\Z`,
  String.raw`a\z`,
  ".",
  "(?s).",
].map((pattern) => ({
  pattern,
  args: [
    ...FIXED_ARGS,
    "abc",
    "ab-rf",
    "-rf-rf",
    "-rfa",
    "aab",
    "ab",
    "b",
    "x",
    " x ",
    "٣",
    "\u{11F50}",
    "\u{1E030}",
    "\u{31350}",
    "\u180e",
    "a\n\n",
    "\r",
  ],
}));

Deno.test("pyre: the probe's possessive and atomic cases are refused; their neighbours agree with CPython", async () => {
  const oracle = await Oracle.start();
  const stats = newStats();
  try {
    assertSameUnicode(oracle);
    for (const c of PINNED) await check(oracle, c, stats);
    // CPython itself separates the probe's pattern from its plain-quantifier twin on "-rf".
    const probe = await oracle.verdict("(?:[a-z0-9]*|-rf)*+", ["-rf"]);
    const plain = await oracle.verdict("(?:[a-z0-9]*|-rf)*", ["-rf"]);
    assert.deepEqual([probe.v, plain.v], ["0", "1"]);
  } finally {
    await oracle.close();
  }
  for (const p of ["(?:[a-z0-9]*|-rf)*+", "(?>[a-z0-9]*|-rf)*", "(?>(?:[a-z0-9]*|-rf)*)"]) {
    assert.ok(ours(p) instanceof PolicyError, p);
  }
  assert.ok(stats.compared >= 20, `only ${stats.compared} pinned patterns compared`);
});

Deno.test("pyre: agrees with CPython's re.fullmatch or refuses, on generated patterns (differential)", async () => {
  const seed = envInt("PYRE_DIFF_SEED") ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  const numRuns = envInt("PYRE_DIFF_RUNS") ?? 2500;
  const oracle = await Oracle.start();
  const stats = newStats();
  const started = performance.now();
  try {
    assertSameUnicode(oracle);
    await fc.assert(fc.asyncProperty(caseArb, (c) => check(oracle, c, stats)), {
      seed,
      numRuns,
    });
  } catch (e) {
    throw new Error(
      `differential test failed; replay with PYRE_DIFF_SEED=${seed} PYRE_DIFF_RUNS=${numRuns}\n${
        e instanceof Error ? e.message : String(e)
      }`,
      { cause: e },
    );
  } finally {
    await oracle.close();
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `pyre differential: seed ${seed}, CPython ${oracle.python} (Unicode ${oracle.unicode}), ` +
      `${stats.patterns} patterns (${stats.cpythonRefused} refused by CPython, ` +
      `${stats.cpythonWarned} warned, ${stats.oursRefused} more refused here), ` +
      `${stats.compared} compared on ${stats.comparisons} arguments (${stats.positives} matches, ` +
      `${stats.timeouts} CPython timeouts skipped) in ${seconds}s`,
  );
  // Not vacuous: most patterns are compared, and many arguments match.
  assert.ok(stats.compared >= numRuns / 5, `only ${stats.compared} patterns compared`);
  assert.ok(stats.positives >= numRuns, `only ${stats.positives} matching arguments`);
  assert.ok(stats.timeouts <= numRuns / 100, `${stats.timeouts} CPython timeouts`);
});
