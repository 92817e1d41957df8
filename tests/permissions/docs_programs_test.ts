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
  // The phrase as written, however the formatter wraps it.
  const start = doc.search(/`--allow-run` of\s+exactly these programs:/);
  assert.ok(start >= 0, "the release programs table is missing from docs/permissions.md");
  const table = doc.slice(start).split("\n\n")[1];
  const listed = [...table.matchAll(/`(\/[^`]+)`/g)].map((m) => m[1]).sort();
  assert.deepEqual(listed, granted);
});

Deno.test("docs/permissions.md's command table names every command the CLI has", async () => {
  const { COMMANDS } = await import("../../lib/cli/commands.ts");
  const doc = Deno.readTextFileSync(join(REPO_ROOT, "docs/permissions.md"));
  const table = doc.slice(doc.indexOf("| command")).split("\n\n")[0];
  const cells = table.split("\n").slice(2).map((l) => l.split("|")[1].replaceAll("`", "").trim());
  const missing = COMMANDS.filter((c) => {
    const [group, sub] = c.words;
    return !cells.some((cell) =>
      sub === undefined
        ? new RegExp(`(^|[ ,/] *)${group}( |,|$)`).test(cell)
        : cell.includes(`${group} ${sub}`) || (cell.startsWith(group) && cell.includes(sub))
    );
  }).map((c) => c.words.join(" "));
  assert.deepEqual(missing, []);
});
