/**
 * docs/permissions.md lists every program the release forms may run (issue 14, item 15): the
 * table's programs are exactly `releaseFlags()`'s `--allow-run` list.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";
import { releaseFlags } from "../../lib/permissions.ts";

Deno.test("docs/permissions.md names exactly the release forms' --allow-run programs", () => {
  const flag = releaseFlags().find((f) => f.startsWith("--allow-run="));
  assert.ok(flag !== undefined);
  const granted = flag.slice("--allow-run=".length).split(",").sort();
  const doc = Deno.readTextFileSync(join(REPO_ROOT, "docs/permissions.md"));
  const start = doc.indexOf("`--allow-run` of exactly these programs:");
  assert.ok(start >= 0, "the release programs table is missing from docs/permissions.md");
  const table = doc.slice(start).split("\n\n")[1];
  const listed = [...table.matchAll(/`(\/[^`]+)`/g)].map((m) => m[1]).sort();
  assert.deepEqual(listed, granted);
});
