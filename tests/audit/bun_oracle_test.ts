/**
 * The model of Bun's YAML parser (lib/audit/hosts/bun_yaml.ts) against the real Bun (npm
 * `@oven/bun-linux-x64`, the runtime Claude Code 2.1.x ships in) as the oracle: every front
 * matter of the host corpus, as Claude Code cuts it and as its retry re-quotes it, every flow
 * list the retry tests, and generated agent files' front matters, parsed by both; the model must
 * give Bun's value, or fail where Bun fails, wherever it does not say it can't tell. A drift of
 * the model from Bun fails here, not in the field.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { removeTree, tempDir } from "../_helpers/mod.ts";
import { BUN_VERSION, bunBinary, bunYamlParseAll } from "../_helpers/bun.ts";
import { bunYamlParse } from "../../lib/audit/hosts/bun_yaml.ts";
import { claudeFrontMatter, claudeRequote } from "../../lib/audit/hosts/claude.ts";
import { claudeCases } from "./_hosts.ts";
import { agentFile } from "./_fm_gen.ts";

/** The YAML texts Claude Code 2.1.332 hands Bun for one file. */
function yamlInputs(text: string): string[] {
  const fm = claudeFrontMatter(text, true);
  if (fm === null) return [];
  const out = [fm, claudeRequote(fm)];
  for (const line of fm.split("\n")) {
    const m = /^[a-zA-Z_-]+:\s+(\[.*\])$/.exec(line);
    if (m !== null) out.push(m[1]);
  }
  return out;
}

/** JSON's view of a value (what the comparison sees: no undefined, no prototypes). */
function plain(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v ?? null));
}

Deno.test(`the Bun YAML model reads every corpus and generated front matter as Bun ${BUN_VERSION} does`, async () => {
  const dir = await tempDir("bun-oracle");
  try {
    const texts = new Set<string>();
    for (const c of claudeCases()) for (const t of yamlInputs(c.text)) texts.add(t);
    for (const f of fc.sample(agentFile, { numRuns: 1500, seed: 2222 })) {
      for (const t of yamlInputs(f)) texts.add(t);
    }
    // Bun's own choices, named (see the model's doc): duplicates, merges, documents, 1.2 words.
    for (
      const t of [
        "tools: Read\ntools: Edit\n",
        "b: &b\n  tools: Edit\n<<: *b\n",
        "tools: Read\n...\ntools: Edit\n",
        "tools: yes\nx: 0o17\n",
        "tools: !!str Edit\n",
        "",
        "# only a comment\n",
        // The fast path (plain_yaml.ts): plain words, quoted strings without escapes.
        "name: w\ndescription: \"Use it: now <e>user: 'x'</e> # not a comment\"\ntools: Read, Grep\n",
        "name: w\ndescription: 'a # b: c'\ntools: Bash(git log:*), Read(src/**)\n",
        "name: w\ntools: mcp__x__y, *\ncolor:\n",
        "name: yes\ndescription: on\ntools: off, no, Y\n",
        // Plain values with the characters real descriptions hold (the widened fast path).
        "name: w\ndescription: It's the user's \"best\" tool — café 😀; see https://x.y/z, C#\n",
        "name: w\ndescription: a!?<>|~%@`=+;$^\\ b*c (d) e/f -g _h 'i' \"j\" k#l\ntools: Read, Grep\n",
        "name: w\ndescription: \"a\\nb \\\"c\\\" \\\\ \\t\"\ntools: 'it''s'\n# a comment: here\n",
      ]
    ) texts.add(t);
    const list = [...texts];
    const bun = await bunBinary(dir);
    const real = await bunYamlParseAll(bun, dir, list);
    assert.equal(real.length, list.length);
    let compared = 0;
    const drift: string[] = [];
    for (let i = 0; i < list.length; i++) {
      const model = bunYamlParse(list[i]);
      if (model.ok === "uncertain") continue;
      compared++;
      const r = real[i];
      if ("error" in r) {
        if (model.ok !== false) drift.push(`${JSON.stringify(list[i])}: Bun fails (${r.error})`);
      } else if (model.ok === false) {
        drift.push(`${JSON.stringify(list[i])}: Bun reads ${JSON.stringify(r.value)}`);
      } else {
        try {
          assert.deepEqual(plain(model.value), plain(r.value));
        } catch {
          drift.push(
            `${JSON.stringify(list[i])}: Bun ${JSON.stringify(r.value)}, model ${
              JSON.stringify(model.value)
            }`,
          );
        }
      }
    }
    assert.ok(compared >= 500, `only ${compared} texts compared`);
    assert.deepEqual(drift, [], `${drift.length} of ${compared} drift:\n${drift.join("\n")}`);
  } finally {
    await removeTree(dir);
  }
});
