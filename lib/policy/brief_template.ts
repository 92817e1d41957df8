/**
 * The brief `agentteams init` writes: a commented JSONC template that turns the switch on and
 * names, in `agent_policies`, every agent the project's agent files hold (the orchestrator
 * excepted: it is the writer, not a dispatched agent). Each agent starts with no write scope and
 * no command, so it can propose nothing until the operator widens it: fail closed. Pure: the
 * caller finds the agents (the audit's walk) and checks the text with the brief's own reader,
 * schema and lint before writing it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { briefTemplate } from "./brief_template.ts";
 * const text = briefTemplate([{ slug: "reviewer", files: [".claude/agents/reviewer.md"] }]);
 * assert.ok(text.includes('"reviewer": { "write_scopes": [], "commands": [] }'));
 * ```
 * @module
 */
import { AGENT_SLUG } from "./brief_fields.ts";

/** One agent found in the project's agent files. */
export interface FoundAgent {
  /** Its slug (the file name without the framework's extension). */
  readonly slug: string;
  /** The files that define it, relative to the project. */
  readonly files: readonly string[];
}

/** A path as it may sit in a `//` comment: one line, quoted when it holds anything unusual. */
function commentPath(rel: string): string {
  return /^[\x21-\x7e][\x20-\x7e]*$/.test(rel) && !rel.includes("*/") ? rel : JSON.stringify(rel);
}

/**
 * The template's text for `agents` (in the order given; slugs that are not agent slugs are left
 * out and named in a comment, since the brief would refuse them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { briefTemplate } from "./brief_template.ts";
 * assert.ok(briefTemplate([]).includes('"write_policy": "orchestrator-only"'));
 * ```
 */
export function briefTemplate(agents: readonly FoundAgent[]): string {
  const valid = agents.filter((a) => AGENT_SLUG.test(a.slug));
  const invalid = agents.filter((a) => !AGENT_SLUG.test(a.slug));
  const lines = [
    "// The agentteams brief: the policy the runner applies to this project's agents.",
    "// Written by `agentteams init` from the agent files it found. Edit it, then run",
    "// `agentteams brief check` and `agentteams doctor`; `agentteams schema brief` prints its",
    "// JSON Schema. Agents never edit this file (the session settings deny it to them).",
    "{",
    '  // "orchestrator-only": agents return proposals and command requests; only the runner',
    "  // (started outside every agent session) applies and runs them, and records each act.",
    '  "write_policy": "orchestrator-only",',
    '  // The switch needs an explicit profile: "confined" (each session runs in its sandbox) or',
    '  // "exclusive".',
    '  "privilege_profile": "confined",',
    "  // write_policy_frameworks is left out: the switch covers every framework.",
    "  // One entry per agent the orchestrator dispatches (the comment above each names its",
    "  // files). An agent starts with no write scope and no command, so it can propose nothing",
    "  // until you widen it here:",
    '  //   "write_scopes": project-relative paths its change and deletion proposals may write',
    '  //     (fnmatch patterns; "src/" is the whole folder), e.g. ["src/", "docs/*.md"];',
    '  //   "commands": the commands its requests may run, each by its argv prefix, e.g.',
    '  //     [{"prefix": ["deno", "test"]}].',
  ];
  if (valid.length === 0) {
    lines.push("  // No agent file was found; add one entry per agent.");
    lines.push('  "agent_policies": {}');
  } else {
    lines.push('  "agent_policies": {');
    valid.forEach((a, i) => {
      lines.push(`    // ${a.files.map(commentPath).join(", ")}`);
      const sep = i === valid.length - 1 ? "" : ",";
      lines.push(`    ${JSON.stringify(a.slug)}: { "write_scopes": [], "commands": [] }${sep}`);
    });
    lines.push("  }");
  }
  if (invalid.length > 0) {
    lines.push(
      "  // Not listed (a slug is lower-case letters, digits and '-'; rename the file to list it):",
    );
    for (const a of invalid) lines.push(`  // ${a.files.map(commentPath).join(", ")}`);
  }
  lines.push("}");
  return lines.join("\n") + "\n";
}
