/**
 * The bad-input corpus (tests/fixtures/audit/): one file per trick, each with its expected
 * findings (code, line) in expected.json. Each file is audited where its host would find it
 * (a Claude file under .claude/agents/, a recipe under .goose/recipes/, ...), under the switch;
 * the findings must be exactly the expected ones. Clean real-looking files expect none.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { auditEntries } from "../../lib/audit/team.ts";
import { corpus, corpusText, DIR, placeOf } from "./_corpus.ts";

const CASES = corpus();

Deno.test("the corpus has at least 80 cases across the frameworks, each file listed once", () => {
  const names = Object.keys(CASES);
  assert.ok(names.length >= 80, `${names.length} cases`);
  for (const fw of ["claude", "copilot", "goose", "codex"]) {
    assert.ok(names.filter((n) => n.startsWith(`${fw}/`)).length >= 8, fw);
  }
  const onDisk: string[] = [];
  for (const d of Deno.readDirSync(DIR)) {
    if (!d.isDirectory) continue;
    for (const f of Deno.readDirSync(join(DIR, d.name))) onDisk.push(`${d.name}/${f.name}`);
  }
  assert.deepEqual(onDisk.sort(), names.sort(), "every fixture file has an expectation");
});

for (const [rel, expected] of Object.entries(CASES)) {
  Deno.test(`corpus ${rel}`, () => {
    const text = corpusText(rel);
    const found = auditEntries([{ rel: placeOf(rel), state: "text", text }], {
      switchOn: true,
      frameworks: [],
    });
    for (const f of found) {
      assert.ok(f.line >= 1 && f.column >= 1, `${f.code} has a place`);
      assert.equal(f.enforced, true);
      assert.ok(f.message.length > 0);
    }
    const wantsSection = expected.some(([c]) => c === "AGENT_SECTION_MISSING");
    const got = found
      .filter((f) => f.code !== "SETTINGS_DENY_MISSING")
      .filter((f) => wantsSection || f.code !== "AGENT_SECTION_MISSING")
      .map((f) => [f.code, f.line] as [string, number])
      .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
    const want = [...expected].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
    assert.deepEqual(got, want, `${rel}: ${JSON.stringify(found.map((f) => f.message))}`);
  });
}
