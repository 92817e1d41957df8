/**
 * A literal write scope that names a directory (`"src"`, not `"src/"`) covers the file `src`
 * only: the lint warns (not refuses) when the project has a directory of that name, and says
 * nothing when it is a file or absent; `OUT_OF_SCOPE` for a path below such a scope says so.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPolicy } from "../../lib/policy/brief.ts";
import { literalScopes, scopeWarnings } from "../../lib/policy/lint.ts";
import { parseJsonSource } from "../../lib/policy/json_source.ts";
import { parsePolicy } from "../../lib/policy/parse.ts";
import { isLiteralScope, literalScopeAbove } from "../../lib/policy/scope.ts";
import { validateBrief } from "../../lib/policy/validate.ts";
import { checkProposalPath } from "../../lib/proposals/path_rules.ts";
import { staticPlane } from "../../lib/policy/control_plane.ts";
import { ProposalError } from "../../lib/errors.ts";
import { OPTS } from "./_helpers.ts";

const BRIEF = `{
  "agent_policies": {
    "worker": { "write_scopes": ["src", "docs/", "notes.txt", "r/p?"] },
  },
}
`;

const HINT = 'the scope "src" names the file src only; write "src/" for the directory';

Deno.test("scope: literal scopes and the literal scope above a path", () => {
  assert.equal(isLiteralScope("src"), true);
  assert.equal(isLiteralScope("a/b.md"), true);
  assert.equal(isLiteralScope("src/"), false);
  assert.equal(isLiteralScope("r/p?"), false);
  assert.equal(literalScopeAbove("src/a.ts", ["docs/", "src"]), "src");
  assert.equal(literalScopeAbove("src/deep/a.ts", ["src"]), "src");
  assert.equal(literalScopeAbove("srcx/a.ts", ["src"]), null);
  assert.equal(literalScopeAbove("src", ["src"]), null);
  assert.equal(literalScopeAbove("src/a.ts", ["src/"]), null);
  assert.equal(literalScopeAbove("r/p2/a", ["r/p?"]), null);
  assert.deepEqual(
    literalScopes({ a: { writeScopes: ["src", "docs/", "r/p?"] }, b: { writeScopes: ["src"] } }),
    ["src"],
  );
});

Deno.test("lint: a literal scope naming an existing directory is warned about (pure: dirs passed in)", () => {
  const src = parseJsonSource(BRIEF, "agentteams.jsonc");
  const raw = validateBrief(src);
  const warned = scopeWarnings(raw, src, new Set(["src"]));
  assert.equal(warned.length, 1, warned.join("\n"));
  assert.match(warned[0], /^agentteams\.jsonc:3:34: agent_policies\.worker\.write_scopes\[0\]: /);
  assert.ok(warned[0].includes(HINT), warned[0]);
  assert.ok(warned[0].includes("is an existing directory"), warned[0]);
  // Nothing known to be a directory, or only scopes that are not literal: no warning.
  assert.deepEqual(scopeWarnings(raw, src, new Set()), []);
  assert.deepEqual(scopeWarnings(raw, src, new Set(["docs", "r/p?"])), []);
  // parsePolicy carries them, and none without the fact.
  assert.deepEqual(parsePolicy(BRIEF, OPTS).warnings, []);
  // The fact is asked of the caller, and only of the literal scopes.
  const asked: string[] = [];
  const p = parsePolicy(BRIEF, {
    ...OPTS,
    isDirectory: (rel) => (asked.push(rel), rel === "src"),
  });
  assert.ok(!asked.some((a) => a.includes("*")), `a glob scope was asked about: ${asked}`);
  assert.ok(asked.includes("src"), `asked ${asked}`);
  assert.equal(p.warnings?.length, 1);
  assert.ok(p.warnings?.[0].includes(HINT));
  // A warning, not a refusal: the policy is the same.
  assert.deepEqual(p.agents, parsePolicy(BRIEF, OPTS).agents);
});

async function withRoot(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "agentteams-litscope-" }));
  try {
    await Deno.writeTextFile(join(root, "agentteams.jsonc"), BRIEF);
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("brief: loadPolicy warns when the literal scope is an existing directory", async () => {
  await withRoot(async (root) => {
    await Deno.mkdir(join(root, "src"));
    await Deno.mkdir(join(root, "notes.txt")); // a second one, and a scope that is fine
    await Deno.mkdir(join(root, "docs"));
    const policy = await loadPolicy(join(root, "agentteams.jsonc"), { projectRoot: root });
    const w = policy.warnings ?? [];
    assert.equal(w.length, 2, w.join("\n"));
    assert.ok(w[0].includes("write_scopes[0]") && w[0].includes(HINT), w[0]);
    assert.ok(w[1].includes("write_scopes[2]") && w[1].includes('write "notes.txt/"'), w[1]);
  });
});

Deno.test("brief: no warning when the literal scope is a file, a symlink or absent", async (t) => {
  await t.step("absent", async () => {
    await withRoot(async (root) => {
      const policy = await loadPolicy(join(root, "agentteams.jsonc"), { projectRoot: root });
      assert.deepEqual(policy.warnings, []);
    });
  });
  await t.step("a file", async () => {
    await withRoot(async (root) => {
      await Deno.writeTextFile(join(root, "src"), "a file named src\n");
      await Deno.writeTextFile(join(root, "notes.txt"), "notes\n");
      const policy = await loadPolicy(join(root, "agentteams.jsonc"), { projectRoot: root });
      assert.deepEqual(policy.warnings, []);
    });
  });
  await t.step("a symlink to a directory (not followed)", async () => {
    await withRoot(async (root) => {
      await Deno.mkdir(join(root, "real"));
      await Deno.symlink(join(root, "real"), join(root, "src"));
      const policy = await loadPolicy(join(root, "agentteams.jsonc"), { projectRoot: root });
      assert.deepEqual(policy.warnings, []);
    });
  });
});

Deno.test("path rules: OUT_OF_SCOPE below a literal scope names the scope and suggests the directory", () => {
  const policy = parsePolicy(BRIEF, OPTS);
  const plane = staticPlane("/proj");
  const refuse = (rel: string): ProposalError => {
    try {
      checkProposalPath(rel, "worker", policy, plane);
    } catch (e) {
      assert.ok(e instanceof ProposalError, String(e));
      assert.equal(e.code, "OUT_OF_SCOPE", e.message);
      return e;
    }
    assert.fail(`${rel} was accepted`);
  };
  assert.ok(refuse("src/a.ts").message.includes(`(${HINT})`));
  assert.ok(refuse("src/deep/a.ts").message.includes(HINT));
  // Outside every scope and below none: no hint.
  const other = refuse("lib/a.ts").message;
  assert.ok(!other.includes("names the file"), other);
  // The literal scope itself is in scope.
  assert.equal(checkProposalPath("src", "worker", policy, plane).rel, "src");
});
