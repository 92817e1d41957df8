/**
 * What a host grants an agent, as its host model computes it: every tool, or a list of tool
 * names (rules such as `Bash(git:*)` kept whole). The checks judge grants, not YAML.
 *
 * @module
 */
import { classifyTool, type ToolClass } from "../tools.ts";

/** The tools a host grants: every tool, or the names it lists. */
export type Grant =
  | { readonly all: true }
  | { readonly all: false; readonly names: readonly string[] };

/** One host's reading of one agent file. */
export interface HostReading {
  /** The host and version, e.g. `Claude Code 2.1.332`. */
  readonly host: string;
  /** How that version reads the file, in a few words (its boundary, its YAML, its retry). */
  readonly how: string;
  /** Whether that host loads the file as an agent at all (a file it skips grants nothing). */
  readonly agent: boolean;
  /** What it grants, when it loads the file. */
  readonly grant: Grant | null;
  /** Why the model can't say what the host reads (a construct the model doesn't cover), if so. */
  readonly uncertain?: string;
}

/** Every tool. */
export const ALL: Grant = { all: true };

/**
 * A reading in which `host` does not load the file as an agent (it grants nothing), saying how,
 * and why the model is unsure, if it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notAnAgent } from "./grant.ts";
 * assert.equal(notAnAgent("Claude Code 2.1.332", "finds no front matter").agent, false);
 * ```
 */
export function notAnAgent(host: string, how: string, uncertain?: string): HostReading {
  return {
    host,
    how,
    agent: false,
    grant: null,
    ...(uncertain === undefined ? {} : { uncertain }),
  };
}

/**
 * The part of a grant that is not read-only: `"*"` for every tool, else the sorted, de-duplicated
 * names whose class is not `read` (as `classify` sees them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { beyondReadOnly } from "./grant.ts";
 * assert.deepEqual(beyondReadOnly({ all: false, names: ["Read", "Edit", "Edit"] }), ["Edit"]);
 * assert.deepEqual(beyondReadOnly({ all: true }), ["*"]);
 * ```
 */
export function beyondReadOnly(
  g: Grant,
  classify: (name: string) => ToolClass = classifyTool,
): string[] {
  if (g.all) return ["*"];
  return [...new Set(g.names.filter((n) => classify(n) !== "read"))].sort();
}

/**
 * A grant in words: `every tool` or the names, for messages.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeGrant } from "./grant.ts";
 * assert.equal(describeGrant({ all: false, names: ["Read", "Edit"] }), "Read, Edit");
 * ```
 */
export function describeGrant(g: Grant | null): string {
  if (g === null) return "nothing (it does not load the file as an agent)";
  if (g.all) return "every tool";
  return g.names.length === 0 ? "no tools" : g.names.join(", ");
}
