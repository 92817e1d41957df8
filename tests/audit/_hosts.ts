/** The host corpus of tests/testdata/hosts/: each file with its hosts' readings beside it. */
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";

/** The Claude Code part of the host corpus. */
export const CLAUDE_DIR = join(REPO_ROOT, "tests", "testdata", "hosts", "claude");

/** A host's reading as the sidecar records it: `tools` is `"*"` (every tool) or the names. */
export interface RecordedReading {
  readonly agent: boolean;
  readonly tools?: "*" | readonly string[];
}

/** A corpus case: the file's text, why it is there, each host version's reading and source. */
export interface HostCase {
  readonly name: string;
  readonly text: string;
  readonly why: string;
  readonly readings: Readonly<Record<string, RecordedReading>>;
  readonly source: Readonly<Record<string, string>>;
}

/** Every Claude Code case, by name. */
export function claudeCases(): HostCase[] {
  const out: HostCase[] = [];
  for (const e of Deno.readDirSync(CLAUDE_DIR)) {
    if (!e.name.endsWith(".md")) continue;
    const name = e.name.slice(0, -3);
    const side = JSON.parse(Deno.readTextFileSync(join(CLAUDE_DIR, `${name}.json`)));
    out.push({ name, text: Deno.readTextFileSync(join(CLAUDE_DIR, e.name)), ...side });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}
