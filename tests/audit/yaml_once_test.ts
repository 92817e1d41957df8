/**
 * The one compose of a front matter (lib/audit/yaml_once.ts, issue 24 item 5): wherever it says
 * what the host models' parsers give, each parser run on its own with its own options gives the
 * same (the `yaml` package's `parse`, and Bun's model's `parseAllDocuments` settings), over
 * generated front matters, the audit's fixture corpus, the host fixtures and the bench's shapes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import fc from "../_helpers/fc.ts";
import { REPO_ROOT } from "../_helpers/mod.ts";
import {
  claudeFrontMatter,
  claudeRequote,
  claudeRequote2_1_42,
} from "../../lib/audit/hosts/claude.ts";
import { composedReading, composeOnce, withYamlEnv } from "../../lib/audit/yaml_once.ts";
import {
  copilotFrontMatter,
  copilotSharesCompose,
  copilotYaml,
  copilotYamlParsed,
} from "../../lib/audit/hosts/copilot.ts";
import process from "node:process";
import { writeAuditCorpus } from "../../scripts/bench/audit_corpus.ts";
import { plainFlatMap } from "../../lib/audit/plain_yaml.ts";
import { agentFile } from "./_fm_gen.ts";

type Own = { ok: true; value: unknown } | { ok: false };

/** The `yaml` package's `parse`, as Claude Code 2.1.42 under Node calls it. */
function ownParse(text: string): Own {
  try {
    return { ok: true, value: parse(text, { logLevel: "error" }) ?? null };
  } catch {
    return { ok: false };
  }
}

/** The settings of Bun's model (lib/audit/hosts/bun_yaml.ts), on one document. */
function ownBun(text: string): Own {
  try {
    const docs = parseAllDocuments(text, {
      version: "1.2",
      schema: "core",
      merge: true,
      uniqueKeys: false,
      prettyErrors: false,
    });
    const list = Array.isArray(docs) ? docs : [];
    if (list.some((d) => d.errors.length > 0)) return { ok: false };
    const values = list.map((d) => d.toJS({ maxAliasCount: 100 }));
    return {
      ok: true,
      value: values.length === 0 ? null : values.length === 1 ? values[0] : values,
    };
  } catch {
    return { ok: false };
  }
}

let told = 0;
let refused = 0;

/** Asserts the one compose agrees with both parsers wherever it tells; counts what it told. */
function agrees(text: string): void {
  const once = composedReading(text);
  if (once === null) return;
  for (const own of [ownParse(text), ownBun(text)]) {
    assert.equal(once.ok, own.ok, `${JSON.stringify(text)}: ok ${once.ok} vs ${own.ok}`);
    if (once.ok && own.ok) {
      assert.deepEqual(once.value, own.value, JSON.stringify(text));
    }
  }
  if (once.ok) told++;
  else refused++;
}

/** Every text a Claude model reads from a file: the front matter and both retries. */
function texts(file: string): string[] {
  const fm = claudeFrontMatter(file, true);
  return fm === null ? [] : [fm, claudeRequote(fm), claudeRequote2_1_42(fm)];
}

Deno.test("the one compose tells what each parser gives, for generated front matters", () => {
  told = 0;
  refused = 0;
  fc.assert(fc.property(agentFile, (file) => texts(file).forEach(agrees)), { numRuns: 1500 });
  // The property proved something: the compose told values and refusals alike.
  assert.ok(told > 100, `told ${told}`);
  assert.ok(refused > 20, `refused ${refused}`);
});

Deno.test("the one compose tells what each parser gives, for the fixtures and the bench corpus", () => {
  told = 0;
  refused = 0;
  const dirs = ["tests/fixtures/audit", "tests/testdata/hosts"].map((d) => join(REPO_ROOT, d));
  const walk = (d: string): string[] =>
    [...Deno.readDirSync(d)].flatMap((e) =>
      e.isDirectory ? walk(join(d, e.name)) : e.name.endsWith(".md") ? [join(d, e.name)] : []
    );
  for (const f of dirs.flatMap(walk)) texts(Deno.readTextFileSync(f)).forEach(agrees);
  const tmp = Deno.makeTempDirSync();
  try {
    for (const fm of writeAuditCorpus(tmp, 300)) [fm, claudeRequote(fm)].forEach(agrees);
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
  assert.ok(told > 100 && refused > 10, `told ${told}, refused ${refused}`);
});

let shared = 0;
let parsed = 0;

/** The Copilot CLI model's reading of a front matter equals its own parse of it. */
function copilotAgrees(fm: string): void {
  const r = copilotYaml(fm);
  assert.deepEqual(r, copilotYamlParsed(fm), JSON.stringify(fm));
  if (plainFlatMap(fm) === null && copilotSharesCompose(fm)) {
    if (composedReading(`${fm}\n`) !== null) shared++;
    else parsed++;
  }
}

/** The Copilot CLI's front matter of a file, if it has one, and the same with a trailing blank. */
function copilotTexts(file: string): string[] {
  const fm = copilotFrontMatter(file);
  return typeof fm === "string" ? [fm, `${fm}\n  `, `${fm}\n# c`] : [];
}

/** A front matter's last lines, from the bits whose reading a final line break might change. */
const tail: fc.Arbitrary<string> = fc.array(
  fc.constantFrom(
    "a: |",
    "a: |+",
    "a: >-",
    "b: x |",
    "  x",
    "  y  ",
    "",
    "- z",
    "c: 'q",
    'c: "q',
    "  q'",
    "d: [x,",
    "  y]",
    "e: {f: g",
    "# c",
    "---",
    "...",
    "h: i  ",
    "j: k: l",
    "\t",
    "? m",
  ),
  { minLength: 1, maxLength: 4 },
).map((ls) => ls.join("\n"));

Deno.test("the Copilot CLI model reads each front matter as its own parse does, the shared compose included", () => {
  shared = 0;
  parsed = 0;
  fc.assert(
    fc.property(agentFile, (file) => copilotTexts(file).forEach(copilotAgrees)),
    { numRuns: 1500, seed: 247 },
  );
  fc.assert(fc.property(tail, copilotAgrees), { numRuns: 3000, seed: 248 });
  const dirs = ["tests/fixtures/audit", "tests/testdata/hosts"].map((d) => join(REPO_ROOT, d));
  const walk = (d: string): string[] =>
    [...Deno.readDirSync(d)].flatMap((e) =>
      e.isDirectory ? walk(join(d, e.name)) : e.name.endsWith(".md") ? [join(d, e.name)] : []
    );
  for (const f of dirs.flatMap(walk)) copilotTexts(Deno.readTextFileSync(f)).forEach(copilotAgrees);
  const tmp = Deno.makeTempDirSync();
  try {
    for (const fm of writeAuditCorpus(tmp, 300)) copilotAgrees(fm.slice(0, -1));
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
  // The shared compose told often (the rest the fast path answered, or the model parsed).
  assert.ok(shared > 1000 && parsed > 100, `shared ${shared}, parsed ${parsed}`);
});

Deno.test("the one compose leaves to the parsers what their options decide", () => {
  // A duplicate key (the yaml package refuses it, Bun keeps the last), a merge key, an alias,
  // several documents, none: each parser reads these itself.
  for (
    const t of [
      "a: 1\na: 2\n",
      "a: &x {b: 1}\nc:\n  <<: *x\n",
      "a: &x 1\nb: *x\n",
      "a: 1\n---\nb: 2\n",
      "# only\n",
    ]
  ) {
    assert.equal(composedReading(t), null, t);
  }
  // The same text is composed once.
  assert.equal(composeOnce("name: w\ntools: [Read]\n"), composeOnce("name: w\ntools: [Read]\n"));
  assert.deepEqual(composedReading("name: w\ntools: [Read]\n"), {
    ok: true,
    value: { name: "w", tools: ["Read"] },
  });
  assert.equal(composedReading("description: a: b\n")?.ok, false);
});

Deno.test("the yaml parser runs with its two debug variables only, and process.env comes back", () => {
  const before = process.env;
  const inside = withYamlEnv(() => Object.keys(process.env).sort());
  assert.deepEqual(inside, ["LOG_STREAM", "LOG_TOKENS"]);
  assert.equal(process.env, before);
  assert.throws(() =>
    withYamlEnv(() => {
      throw new Error("boom");
    }), /boom/);
  assert.equal(process.env, before);
  assert.equal(process.env.HOME, Deno.env.get("HOME"));
});
