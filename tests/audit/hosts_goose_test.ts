/**
 * The Goose host model (lib/audit/hosts/goose.ts) and the Goose checks against the corpus
 * (tests/testdata/hosts/goose/): each sidecar records what goose (aaif-goose/goose at 2d5ca935)
 * runs for the recipe, read from its sources. Goose renders the whole recipe as a MiniJinja
 * template before it reads the YAML, so template syntax inside `instructions` or `prompt` can
 * drop, add or join lines anywhere; the audit must never pass a recipe goose runs with more than
 * the shipped read-only server.
 */
import assert from "node:assert/strict";
import { auditEntries } from "../../lib/audit/team.ts";
import { GOOSE_HOST, type GooseParameter, gooseRenderRisk } from "../../lib/audit/hosts/goose.ts";
import { gooseCases, type GooseRecordedReading } from "./_hosts.ts";

const CASES = gooseCases();

function readingOf(name: string): GooseRecordedReading {
  const c = CASES.find((x) => x.name === name);
  assert.ok(c !== undefined, name);
  return c.readings[GOOSE_HOST] as unknown as GooseRecordedReading;
}

function errorsOf(name: string, text: string) {
  return auditEntries([{ rel: `.goose/recipes/${name}.yaml`, state: "text", text }], {
    switchOn: true,
    frameworks: [],
  }).filter((f) => f.severity === "error" && f.enforced);
}

/** Whether goose's reading runs anything beyond the shipped read-only server. */
function beyondReadOnly(r: GooseRecordedReading): boolean {
  if (!r.loads) return false;
  if (r.render_may_change) return true;
  if (r.extensions === null || typeof r.extensions === "string") return true;
  return Object.entries(r.extensions).some(([name, tools]) =>
    name !== "agentteams_readfs" &&
    !(Array.isArray(tools) && tools.length === 1 && tools[0] === "__none__") &&
    !(name === "developer" && Array.isArray(tools) && tools.every((t) => t === "tree"))
  );
}

Deno.test("the Goose corpus has at least 15 recipes, each with goose's reading and its source", () => {
  assert.ok(CASES.length >= 15, `${CASES.length}`);
  for (const c of CASES) {
    assert.ok(c.readings[GOOSE_HOST] !== undefined && c.source[GOOSE_HOST] !== undefined, c.name);
  }
});

for (const c of CASES) {
  Deno.test(`host corpus goose/${c.name}: the model sees whether goose's render can change it (${c.why})`, () => {
    const want = readingOf(c.name).render_may_change;
    const params = new Map<string, GooseParameter>();
    for (const m of c.text.matchAll(/- key: (\w+)\n((?: {4}.*\n)*)/g)) {
      const d = /default: (.*)/.exec(m[2])?.[1];
      params.set(m[1], {
        ...(d === undefined
          ? {}
          : { default: d.startsWith('"') ? JSON.parse(d) : d.replace(/^'|'$/g, "") }),
        file: /input_type: file/.test(m[2]),
      });
    }
    assert.equal(gooseRenderRisk(c.text, params) !== null, want);
  });

  Deno.test(`host corpus goose/${c.name}: the audit is not clean where goose runs beyond read-only`, () => {
    const r = readingOf(c.name);
    const errors = errorsOf(c.name, c.text);
    if (beyondReadOnly(r)) {
      assert.ok(errors.length > 0, `goose runs ${JSON.stringify(r.extensions)}, yet no error`);
    }
    if (r.render_may_change) {
      assert.ok(errors.some((f) => f.code === "GOOSE_TEMPLATE"), errors.map((f) => f.code).join());
    }
  });
}

// Each divergence between the audit's reading and goose's: passed clean before the model.
for (
  const name of [
    "if-drops-extensions",
    "comment-swallows-extensions",
    "literal-injects-sub-recipes",
    "default-injects-retry",
    "include-in-instructions",
    "trim-joins",
    "quote-in-default",
    "file-param",
  ]
) {
  Deno.test(`goose divergence ${name}: GOOSE_TEMPLATE names what goose renders`, () => {
    const c = CASES.find((x) => x.name === name);
    assert.ok(c !== undefined);
    const t = errorsOf(name, c.text).find((f) => f.code === "GOOSE_TEMPLATE");
    assert.ok(t !== undefined, "no GOOSE_TEMPLATE");
    assert.match(t.message, /goose (may )?renders?/);
  });
}

Deno.test("goose: a plain parameter and a safe default stay clean", () => {
  for (const name of ["clean", "clean-param", "safe-default", "unparseable-kept"]) {
    const c = CASES.find((x) => x.name === name);
    assert.ok(c !== undefined);
    assert.deepEqual(errorsOf(name, c.text).map((f) => f.code), [], name);
  }
});
