/**
 * The demo's long lines (refusals, the permission line, ledger rows) are wrapped at a space by its
 * `wrap` function, never cut mid-word (issue 23 item 9): run by bash as the demo defines it, every
 * word of the input comes out whole and in order, each line fits the width unless it is one word,
 * and no `cut -c` is left in the script.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";

const DEMO = Deno.readTextFileSync(join(REPO_ROOT, "scripts", "demo"));

/** The demo's own `wrap` function, run by bash on `input`. */
async function wrap(width: number, input: string): Promise<string[]> {
  const fn = DEMO.match(/^wrap\(\) \{\n[\s\S]*?\n\}\n/m);
  assert.ok(fn !== null, "scripts/demo defines no wrap()");
  const child = new Deno.Command("bash", {
    args: ["-c", `${fn[0]}wrap ${width}`],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(input));
  await w.close();
  const out = await child.output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).replace(/\n$/, "").split("\n");
}

Deno.test("scripts/demo wraps long lines at a space, never mid-word, and cuts none", async () => {
  assert.doesNotMatch(DEMO, /cut -c/, "scripts/demo still cuts lines by column");
  const refusal = "agentteams apply: refused: STALE_BASE: src/app.py changed since the proposal " +
    "was written (base 1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0, now " +
    "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9): read it again";
  for (const width of [40, 80, 160]) {
    const lines = await wrap(width, `${refusal}\nshort line\n`);
    const words = lines.flatMap((l) => l.trim().split(/ +/));
    assert.deepEqual(words, [...refusal.split(" "), "short", "line"], `width ${width}`);
    for (const l of lines) {
      assert.ok(l.length <= width || !l.trim().includes(" "), `over ${width}: ${l}`);
    }
    assert.equal(lines.at(-1), "short line");
  }
  // A line that fits is printed as it is.
  assert.deepEqual(await wrap(160, "  ok: 12 rows verify\n"), ["  ok: 12 rows verify"]);
});
