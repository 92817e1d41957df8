/**
 * The brief check (issue 14, item 6): docs/policy.md's complete example passes it and loads; a
 * broken brief's findings are every problem, and the first is exactly what loading refuses with,
 * so `brief check` and the load never disagree.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";
import { briefFindings, parsePolicy } from "../../lib/policy/parse.ts";
import { PolicyError } from "../../lib/errors.ts";
import { briefJsonSchema } from "../../lib/policy/brief_schema.ts";
import { POLICY_FIELDS } from "../../lib/policy/brief_fields.ts";

const OPTS = {
  briefPath: "/p/agentteams.jsonc",
  projectRoot: "/p",
  briefSha256: "0".repeat(64),
};

function exampleBrief(): string {
  const doc = Deno.readTextFileSync(join(REPO_ROOT, "docs/policy.md"));
  const at = doc.indexOf("<!-- example-brief -->");
  assert.ok(at >= 0, "docs/policy.md has no example brief");
  const start = doc.indexOf("```jsonc\n", at) + "```jsonc\n".length;
  return doc.slice(start, doc.indexOf("```", start));
}

Deno.test("docs/policy.md's example brief passes the check, loads, and uses every policy field", () => {
  const text = exampleBrief();
  const r = briefFindings(text, OPTS, () => false);
  assert.deepEqual(r.findings.map((e) => e.message), []);
  assert.deepEqual(r.warnings, []);
  assert.deepEqual(r.agents, ["worker", "reviewer"]);
  const policy = parsePolicy(text, OPTS);
  assert.ok(policy.agents.worker !== undefined);
  const used = POLICY_FIELDS.filter((f) => text.includes(`"${f}"`));
  assert.deepEqual(
    POLICY_FIELDS.filter((f) =>
      !used.includes(f) && f !== "write_policy_frameworks" && f !== "mcp_grants"
    ),
    [],
  );
});

/** Broken briefs, each with the codes their findings must have, in order. */
const BROKEN: [string, string, string[]][] = [
  ["not JSON", '{"agent_policies": ', ["BRIEF_SYNTAX"]],
  ["not an object", "[]", ["BRIEF_INVALID"]],
  [
    "unknown keys at two depths and a bad value",
    '{"write_policy": "bogus", "agent_polices": {}, "agent_policies": {"w": {"comands": []}}}',
    ["BRIEF_UNKNOWN_KEY", "BRIEF_UNKNOWN_KEY", "BRIEF_INVALID"],
  ],
  [
    "lint problems in three units",
    '{"agent_policies": {"a": {"write_scopes": ["/abs"], "commands": [{"prefix": ["make"], ' +
    '"args": [".*"]}]}, "b": {"write_scopes": ["../up"]}}, "protected_paths": ["/x"]}',
    ["POLICY_LINT", "POLICY_LINT", "POLICY_LINT", "POLICY_LINT"],
  ],
];

for (const [what, text, codes] of BROKEN) {
  Deno.test(`briefFindings: ${what}: every problem, the first the one loading refuses with`, () => {
    const r = briefFindings(text, OPTS, () => false);
    assert.deepEqual(r.findings.map((e) => e.code), codes);
    assert.throws(
      () => parsePolicy(text, OPTS),
      (e: unknown) =>
        e instanceof PolicyError && e.code === r.findings[0].code &&
        e.message === r.findings[0].message,
    );
  });
}

Deno.test("briefFindings: a literal scope naming a directory is a warning, not a finding", () => {
  const text = '{"agent_policies": {"w": {"write_scopes": ["src"]}}}';
  const r = briefFindings(text, OPTS, (rel) => rel === "src");
  assert.deepEqual(r.findings, []);
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0], /write "src\/" for the directory/);
});

Deno.test("briefFindings: confined writes no confined write directory holds, and an agent with commands but no confined entry, are warnings", () => {
  const text = JSON.stringify({
    agent_policies: {
      w: {
        commands: [
          { prefix: ["touch"], args: ["src/[a-z]+"], writes: ["src/*", "out/x.txt", "b/c/*.o"] },
        ],
      },
      v: { commands: [{ prefix: ["true"] }] },
      q: { write_scopes: ["docs/"] },
    },
    confined_programs: { w: { exec: ["/usr/bin"], write: ["b/c/d", "out"] } },
  });
  const r = briefFindings(text, OPTS, () => false);
  assert.deepEqual(r.findings, []);
  assert.equal(r.warnings.length, 2, r.warnings.join("\n"));
  assert.match(
    r.warnings[0],
    /commands\[0\]\.writes\[0\]: confined, "touch" cannot write "src\/\*"/,
  );
  assert.match(r.warnings[0], /add "src" to confined_programs\.w\.write$/);
  assert.match(r.warnings[1], /agent_policies\.v\.commands: confined_programs has no entry for v/);
  // Loading carries the same warnings (one list for the loader and brief check).
  assert.deepEqual(parsePolicy(text, OPTS).warnings, r.warnings);
  // Without confined_programs in the brief (an operator file may hold it), nothing is said.
  const bare = JSON.stringify({
    agent_policies: { w: { commands: [{ prefix: ["true"], writes: ["src/*"] }] } },
  });
  assert.deepEqual(briefFindings(bare, OPTS, () => false).warnings, []);
});

Deno.test("schema brief: strict, the policy fields and the description fields, nothing else", () => {
  const s = briefJsonSchema();
  assert.equal(s.additionalProperties, false);
  const props = Object.keys(s.properties as Record<string, unknown>);
  for (const f of POLICY_FIELDS) assert.ok(props.includes(f), f);
  assert.ok(props.includes("project_goal"));
  assert.equal(s.$id, "https://agentteams.invalid/schemas/brief.schema.json");
});
