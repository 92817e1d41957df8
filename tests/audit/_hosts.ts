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

/** The Copilot CLI part of the host corpus. */
export const COPILOT_DIR = join(REPO_ROOT, "tests", "testdata", "hosts", "copilot");

/** The cases of one corpus directory, whose files end in `ext`. */
function casesOf(dir: string, ext: string): HostCase[] {
  const out: HostCase[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (!e.name.endsWith(ext)) continue;
    const name = e.name.slice(0, -ext.length);
    const side = JSON.parse(Deno.readTextFileSync(join(dir, `${name}.json`)));
    out.push({ name, text: Deno.readTextFileSync(join(dir, e.name)), ...side });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Every Claude Code case, by name. */
export function claudeCases(): HostCase[] {
  return casesOf(CLAUDE_DIR, ".md");
}

/** Every Copilot CLI case, by name (each file is `<name>.agent.md`). */
export function copilotCases(): HostCase[] {
  return casesOf(COPILOT_DIR, ".agent.md");
}

/** The VS Code part of the host corpus. */
export const VSCODE_DIR = join(REPO_ROOT, "tests", "testdata", "hosts", "vscode");

/** Every VS Code case, by name (each file is `<name>.agent.md`). */
export function vscodeCases(): HostCase[] {
  return casesOf(VSCODE_DIR, ".agent.md");
}

/** The Goose part of the host corpus. */
export const GOOSE_DIR = join(REPO_ROOT, "tests", "testdata", "hosts", "goose");

/** Goose's reading of a recipe as its sidecar records it. */
export interface GooseRecordedReading {
  /** Whether goose accepts the recipe. */
  readonly loads: boolean;
  /** What it runs: each extension's tools (`"*"` every tool), the user's enabled extensions, or
   * `"unknown"` (the text goose reads is not the file's). */
  readonly extensions:
    | Readonly<Record<string, "*" | readonly string[]>>
    | "user-enabled"
    | "unknown"
    | null;
  /** Whether goose's render of the template can change the YAML it reads. */
  readonly render_may_change: boolean;
}

/** Every Goose case, by name (each file is `<name>.yaml`). */
export function gooseCases(): HostCase[] {
  return casesOf(GOOSE_DIR, ".yaml");
}
