/** The bad-input corpus of tests/fixtures/audit/: where each file goes, its expectations. */
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";

/** The corpus directory. */
export const DIR = join(REPO_ROOT, "tests", "fixtures", "audit");

/** Where the host finds a corpus file. */
export function placeOf(rel: string): string {
  const [fw, name] = rel.split("/");
  switch (fw) {
    case "claude":
      return `.claude/agents/${name}`;
    case "copilot":
      return name.endsWith(".chatmode.md") ? `.github/chatmodes/${name}` : `.github/agents/${name}`;
    case "goose":
      return `.goose/recipes/${name}`;
    case "codex":
      return `.codex/agents/${name}`;
    case "codex-config":
      return ".codex/config.toml";
    case "agents-md":
      return "AGENTS.md";
  }
  throw new Error(`no place for ${rel}`);
}

/** The corpus: file → expected [code, line] pairs. */
export function corpus(): Record<string, [string, number][]> {
  return JSON.parse(Deno.readTextFileSync(join(DIR, "expected.json")));
}

/** A corpus file's text. */
export function corpusText(rel: string): string {
  return Deno.readTextFileSync(join(DIR, rel));
}
