/**
 * A team laid out as its hosts find it, from the audit corpus (tests/fixtures/audit): every file
 * the corpus expects no finding for (the real-looking clean agents of each framework), at the
 * place its host loads it from, plus an adopted agent that still grants itself writes and has no
 * write-policy section (what `audit --fix`, named, narrows).
 */
import { dirname, join } from "node:path";
import { corpus, corpusText, placeOf } from "../audit/_corpus.ts";
import type { Sandbox } from "../_helpers/mod.ts";

/** The adopted agent's path and text (broad tools, no section). */
export const ADOPTED = {
  rel: ".claude/agents/docs-writer.md",
  text: "---\nname: docs-writer\ndescription: Writes the docs.\ntools: Read, Edit, Write\n---\n" +
    "You write documentation.\n",
};

/** Lays the clean corpus team (and the adopted agent) out in `root`; returns the files placed. */
export async function layTeam(root: string): Promise<string[]> {
  const placed: string[] = [];
  for (const [rel, expected] of Object.entries(corpus())) {
    if (expected.length > 0) continue;
    const to = placeOf(rel);
    if (placed.includes(to)) continue;
    await Deno.mkdir(join(root, dirname(to)), { recursive: true });
    await Deno.writeTextFile(join(root, to), corpusText(rel));
    placed.push(to);
  }
  await Deno.writeTextFile(join(root, ADOPTED.rel), ADOPTED.text);
  placed.push(ADOPTED.rel);
  return placed;
}

/** The operator's environment with the key dir at its default under HOME (a portable rule). */
export function operatorEnv(sb: Sandbox): Record<string, string> {
  return {
    HOME: sb.home,
    AGENTTEAMS_KEY_DIR: join(sb.home, ".config", "agentteams", "keys"),
    AGENTTEAMS_BROAD_OK: "1",
  };
}
