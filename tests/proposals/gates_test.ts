/**
 * Gate selection as a pure function (`selectGates`): requested gates plus every gate whose glob
 * matches (fnmatch, case-insensitive, `*` crosses `/`), in the brief's order, each once; an
 * unknown requested name is UNKNOWN_GATE, including names inherited from Object.prototype and a
 * gate's name in another letter case. A fast-check property states the same against an oracle.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { ProposalError } from "../../lib/errors.ts";
import { fnmatch } from "../../lib/pycompat/fnmatch.ts";
import { parsePolicy } from "../../lib/policy/parse.ts";
import { selectGates } from "../../lib/proposals/gates.ts";
import { assertRefusal } from "../_helpers/assert.ts";

const GATES: Record<string, { glob?: string; argv: string[] }> = {
  lint: { glob: "src/*.ts", argv: ["/usr/bin/true", "{file}"] },
  docs: { glob: "*.MD", argv: ["/usr/bin/true"] },
  manual: { argv: ["/usr/bin/true", "{path}"] },
  lean: { glob: "lean/*.lean", argv: ["/usr/bin/true"] },
  "a.b:c-d_e": { glob: "[ab]?/x", argv: ["/usr/bin/true"] },
};
const ORDER = Object.keys(GATES);

const POLICY = parsePolicy(
  JSON.stringify({
    agent_policies: { worker: { write_scopes: ["src/"] } },
    proposal_gates: GATES,
  }),
  { briefPath: "/proj/agentteams.jsonc", projectRoot: "/proj", briefSha256: "cd".repeat(32) },
);

const names = (rel: string, requested?: string[]) =>
  selectGates(POLICY, rel, requested).map((g) => g.name);

Deno.test("selectGates: glob matches (case-insensitive, '*' crosses '/'), requests, order", () => {
  assert.deepEqual(names("src/a.ts"), ["lint"]);
  assert.deepEqual(names("SRC/A.TS"), ["lint"]);
  assert.deepEqual(names("src/deep/er/a.ts"), ["lint"]);
  assert.deepEqual(names("lean/MathAgents/X/CX.lean"), ["lean"]);
  assert.deepEqual(names("README.md"), ["docs"]);
  assert.deepEqual(names("docs/deep/page.md"), ["docs"]);
  assert.deepEqual(names("a1/x"), ["a.b:c-d_e"]);
  assert.deepEqual(names("c1/x"), []);
  assert.deepEqual(names("src/a.js"), []);
  assert.deepEqual(names("src/a.js", []), []);
  // A gate without a glob runs only on request.
  assert.deepEqual(names("src/a.js", ["manual"]), ["manual"]);
  // The brief's order, whatever the request order; each gate once.
  assert.deepEqual(names("src/a.ts", ["lean", "manual", "lint", "manual"]), [
    "lint",
    "manual",
    "lean",
  ]);
  assert.deepEqual(names("x.md", ["a.b:c-d_e", "docs"]), ["docs", "a.b:c-d_e"]);
  const [lint] = selectGates(POLICY, "src/a.ts", undefined);
  assert.deepEqual(lint.argv, ["/usr/bin/true", "{file}"]);
  assert.equal(lint.glob, "src/*.ts");
});

Deno.test("selectGates: an unknown requested gate is UNKNOWN_GATE, even an inherited name", async () => {
  for (
    const bad of [
      "nope",
      "LINT",
      "Manual",
      "constructor",
      "__proto__",
      "toString",
      "hasOwnProperty",
    ]
  ) {
    const e = await assertRefusal(
      () => selectGates(POLICY, "src/a.ts", ["lint", bad]),
      "UNKNOWN_GATE",
      ProposalError,
    );
    assert.ok(e.message.includes(bad), e.message);
  }
});

Deno.test("property: the selected gates are (requested ∪ glob-matched) in brief order", () => {
  const relArb = fc.oneof(
    fc.constantFrom("src/a.ts", "SRC/x/y.TS", "lean/a/b.lean", "a.md", "b2/x", "other/file"),
    fc.array(fc.constantFrom("src", "lean", "a", "b1", "x", "y.ts", "z.md", "q.lean", "X"), {
      minLength: 1,
      maxLength: 4,
    }).map((s) => s.join("/")),
  );
  fc.assert(
    fc.property(relArb, fc.subarray(ORDER), fc.boolean(), (rel, requested, omit) => {
      const got = names(rel, omit && requested.length === 0 ? undefined : requested);
      const want = ORDER.filter((n) => {
        const glob = GATES[n].glob;
        return requested.includes(n) || (glob !== undefined && fnmatch(rel, glob));
      });
      assert.deepEqual(got, want, `${rel} ${JSON.stringify(requested)}`);
      // fnmatch is case-insensitive: upper-casing the path selects the same gates.
      assert.deepEqual(names(rel.toUpperCase(), requested), want);
    }),
    { numRuns: 1000 },
  );
});
