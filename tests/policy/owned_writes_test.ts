/** The owned-protected-write rule (lib/policy/owned_writes.ts). */
import assert from "node:assert/strict";
import { entryWritesCover, protectedMatch, protectedWriteRefused } from "../../lib/policy/mod.ts";

const PROTECTED = ["reports/*/counterexamples.json", "secrets"];
const isProtected = (rel: string) => protectedMatch(rel, PROTECTED);

Deno.test("entryWritesCover: fnmatch over the whole path, case-folded, `*` crossing `/`", () => {
  assert.equal(
    entryWritesCover("reports/p1/counterexamples.json", ["reports/*/counterexamples.json"]),
    true,
  );
  assert.equal(
    entryWritesCover("Reports/A/B/CounterExamples.JSON", ["reports/*/counterexamples.json"]),
    true,
  );
  assert.equal(entryWritesCover("reports/p1/notes.md", ["reports/*/counterexamples.json"]), false);
  assert.equal(entryWritesCover("out", ["out/*"]), false);
  assert.equal(entryWritesCover("anything", []), false);
});

Deno.test("protectedWriteRefused: refused unless the entry's own writes cover it", () => {
  const rec = "reports/p1/counterexamples.json";
  assert.equal(protectedWriteRefused(rec, isProtected, []), true, "no entry owns it");
  assert.equal(protectedWriteRefused(rec, isProtected, ["reports/*/notes.md"]), true);
  assert.equal(protectedWriteRefused(rec, isProtected, ["reports/*/counterexamples.json"]), false);
  assert.equal(protectedWriteRefused("secrets/k", isProtected, ["reports/*"]), true);
  assert.equal(protectedWriteRefused("src/a.ts", isProtected, []), false, "not protected");
});
