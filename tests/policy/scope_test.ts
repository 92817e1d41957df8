import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { inWriteScopes, scopeMatches, scopePatternProblem } from "../../lib/policy/scope.ts";

Deno.test("scope: literal files, directories and segment patterns", () => {
  assert.ok(inWriteScopes("docs/guide.md", ["docs/guide.md"]));
  assert.equal(inWriteScopes("docs/guide.md.bak", ["docs/guide.md"]), false);
  assert.ok(inWriteScopes("docs/a/b/c.md", ["docs/"]));
  assert.equal(inWriteScopes("docs", ["docs/"]), false, "a directory scope covers what is below");
  assert.equal(inWriteScopes("docsx/a", ["docs/"]), false);
  assert.ok(inWriteScopes("reports/dossiers/acme/strategy.md", ["reports/dossiers/*/strategy.md"]));
  assert.equal(
    inWriteScopes("reports/dossiers/a/b/strategy.md", ["reports/dossiers/*/strategy.md"]),
    false,
  );
  assert.ok(inWriteScopes("reports/p2/.envrc", ["reports/*/"]), "trailing / covers dot-files");
  assert.ok(inWriteScopes("reports/p2/.cache/x", ["reports/*/"]), "and dot-directories");
  assert.equal(inWriteScopes("reports/.git/config", ["reports/*/"]), false);
  assert.equal(inWriteScopes("reports/.p2/x", ["reports/?p2/"]), false);
  assert.ok(inWriteScopes("reports/.p2/x", ["reports/.p?/"]), "a dotted pattern segment may");
  assert.equal(inWriteScopes("Docs/Guide.MD", ["docs/guide.md"]), false, "case is exact");
  assert.ok(inWriteScopes("src/b.ts", ["src/[a-c].ts"]));
  assert.equal(inWriteScopes("src/d.ts", ["src/[a-c].ts"]), false);
});

Deno.test("scope: unnormalized paths never match", () => {
  for (const rel of ["", "/docs/a", "docs//a", "./docs/a", "docs/../x", "docs/./a", "docs/"]) {
    assert.equal(inWriteScopes(rel, ["docs/"]), false, JSON.stringify(rel));
  }
});

Deno.test("scope: unsafe scopes are named and never match", () => {
  const bad: [string, string][] = [
    ["/abs", "absolute"],
    ["/abs/", "absolute"],
    ["~/x", "home"],
    ["a/../b", "'..'"],
    ["a/./b", "'..'"],
    ["a//b", "'..'"],
    ["./a", "'..'"],
    [".", "'..'"],
    ["", "empty"],
    ["**/x", "'**'"],
    ["src/**", "'**'"],
    ["*/x", "literal project directory"],
    ["?rc/", "literal project directory"],
    ["[s]rc/", "literal project directory"],
    [".git/", "control plane"],
    [".GitHub/agents/", "control plane"],
    [".github/workflows/", "control plane"],
    ["sandbox/", "control plane"],
    [".Agentteams/x", "control plane"],
    [".agentteams-queue/", "control plane"],
    [".claude/settings.json", "control plane"],
    ["src\\x", "backslash"],
    ["src/\nx", "control character"],
  ];
  for (const [scope, reason] of bad) {
    const problem = scopePatternProblem(scope);
    assert.ok(problem !== null && problem.includes(reason), `${JSON.stringify(scope)}: ${problem}`);
    const probe = scope.replace(/^[/~]+/, "").replace(/\/$/, "/f") || "f";
    assert.equal(scopeMatches(probe, scope), false, `${JSON.stringify(scope)} matched ${probe}`);
  }
  for (const good of ["docs/", "docs/guide.md", "reports/*/", "a/b?/[xy]/c.md", "github/x"]) {
    assert.equal(scopePatternProblem(good), null, good);
  }
});

const literalSeg = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,4}$/);
const patternSeg = fc.oneof(
  literalSeg,
  fc.stringMatching(/^[a-z0-9*?]{1,4}$/).filter((s) => !s.includes("**")),
  fc.constantFrom("*", "?", "[a-c]", "[!a]", ".*", "*.md", ".?"),
);
const pathSeg = fc.oneof(
  literalSeg,
  fc.constantFrom(".git", ".env", ".x", "a.md", "b", "c", "A", "x.md", ".md"),
);
const scopeArb = fc.tuple(literalSeg, fc.array(patternSeg, { maxLength: 3 }), fc.boolean()).map((
  [first, rest, slash],
) => [first, ...rest].join("/") + (slash ? "/" : ""));
const relArb = fc.array(pathSeg, { minLength: 1, maxLength: 5 }).map((s) => s.join("/"));

/** Paths built from a scope so that many samples match it (a property that never matches proves nothing). */
const scopeAndRel = fc.tuple(scopeArb, relArb, fc.array(pathSeg, { maxLength: 3 }), fc.boolean())
  .map(([scope, rel, below, derive]) => {
    if (!derive) return [scope, rel] as const;
    const segs = (scope.endsWith("/") ? scope.slice(0, -1) : scope).split("/").map((p) =>
      p.replace(/\[!?[^\]]*\]/g, "b").replace(/[*?]/g, "b")
    );
    return [scope, [...segs, ...(scope.endsWith("/") ? ["f", ...below] : [])].join("/")] as const;
  });

Deno.test("scope: a pattern never matches outside its literal first segment (property)", () => {
  let hits = 0;
  fc.assert(
    fc.property(scopeAndRel, ([scope, rel]) => {
      if (scopeMatches(rel, scope)) {
        hits++;
        assert.equal(rel.split("/")[0], scope.split("/")[0]);
      }
    }),
    { numRuns: 3000 },
  );
  assert.ok(hits > 300, `only ${hits} matching samples`);
});

Deno.test("scope: wildcards never cross `/` (property)", () => {
  let hits = 0;
  fc.assert(
    fc.property(
      scopeAndRel.filter(([s]) => !s.endsWith("/")),
      fc.array(pathSeg, { maxLength: 2 }),
      ([scope, rel], extra) => {
        const longer = [rel, ...extra].join("/");
        if (scopeMatches(longer, scope)) {
          hits++;
          assert.equal(longer.split("/").length, scope.split("/").length, `${scope} ~ ${longer}`);
        }
      },
    ),
    { numRuns: 3000 },
  );
  assert.ok(hits > 300, `only ${hits} matching samples`);
});

Deno.test("scope: a wildcard never matches a dot-segment (property)", () => {
  fc.assert(
    fc.property(scopeAndRel, fc.nat(5), ([scope, base], at) => {
      // Turn one segment of a (often matching) path into a dot-segment.
      const parts0 = base.split("/");
      parts0[at % parts0.length] = "." + parts0[at % parts0.length];
      const rel = parts0.join("/");
      if (!scopeMatches(rel, scope)) return;
      const pat = (scope.endsWith("/") ? scope.slice(0, -1) : scope).split("/");
      const parts = rel.split("/");
      pat.forEach((p, i) => {
        if (parts[i].startsWith(".")) assert.ok(p.startsWith("."), `${p} matched ${parts[i]}`);
      });
    }),
    { numRuns: 3000 },
  );
});

Deno.test("scope: a trailing `/` covers everything below what the pattern matches (property)", () => {
  let hits = 0;
  fc.assert(
    fc.property(
      scopeAndRel.filter(([s]) => !s.endsWith("/")),
      fc.array(pathSeg, { minLength: 1, maxLength: 3 }),
      ([scope, rel], below) => {
        if (!scopeMatches(rel, scope)) return;
        hits++;
        assert.ok(scopeMatches(`${rel}/${below.join("/")}`, scope + "/"));
        assert.equal(scopeMatches(rel, scope + "/"), false);
      },
    ),
    { numRuns: 3000 },
  );
  assert.ok(hits > 300, `only ${hits} matching samples`);
});

Deno.test("scope: matching is case-exact, so a scope never reaches a sibling spelled in another case (or with U+212A KELVIN SIGN)", () => {
  assert.equal(inWriteScopes("Docs/RELEASE.md", ["docs/"]), false);
  assert.equal(inWriteScopes("DOCS/new.md", ["docs/"]), false);
  assert.equal(inWriteScopes("docs/a.md", ["Docs/"]), false);
  assert.equal(inWriteScopes("\u212A8s/deploy.yaml", ["k8s/"]), false);
  assert.equal(inWriteScopes("src/B.ts", ["src/[a-c].ts"]), false);
  assert.ok(inWriteScopes("docs/RELEASE.md", ["docs/"]));
  assert.ok(inWriteScopes("Docs/x.md", ["Docs/"]));
});

Deno.test("scope: flipping the case of a letter in a literal scope's path never keeps the match (property)", () => {
  const seg = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/);
  fc.assert(
    fc.property(fc.array(seg, { minLength: 1, maxLength: 4 }), fc.nat(), (segs, k) => {
      const rel = segs.join("/");
      assert.ok(scopeMatches(rel, rel));
      const letters = [...rel].map((c, i) => [c, i] as const).filter(([c]) => /[a-z]/.test(c));
      const [, at] = letters[k % letters.length];
      const flipped = rel.slice(0, at) + rel[at].toUpperCase() + rel.slice(at + 1);
      assert.equal(scopeMatches(flipped, rel), false, flipped);
      assert.equal(scopeMatches(rel, flipped), false, flipped);
    }),
    { numRuns: 1000 },
  );
});

Deno.test("scope: no scope that passes the check covers the control plane (property)", () => {
  const cp = fc.constantFrom(".git/config", ".github/agents/a.md", "sandbox/x", ".agentteams/l");
  fc.assert(
    fc.property(
      fc.oneof(scopeArb, fc.constantFrom("*/", "?git/", ".git/", "sandbox/", ".GitHub/")),
      cp,
      (scope, rel) => {
        assert.equal(scopeMatches(rel, scope), false, `${scope} covers ${rel}`);
      },
    ),
  );
});
