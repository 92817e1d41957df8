/**
 * The Markdown agents' checks (Claude subagents, Copilot custom agents and chat modes): what
 * `tools:` declares and in what shape, capability keys, `permissionMode`.
 *
 * @module
 */
import { type Spot, spot } from "./finding.ts";
import type { FrontMatter } from "./front_matter.ts";
import type { StrictReading } from "./hosts/judge.ts";
import { classifyTool } from "./tools.ts";
import type { YMap, YNode } from "./yaml_tree.ts";

/** Capability keys that grant what `tools:` doesn't show. */
export const CAPABILITY_KEYS: ReadonlySet<string> = new Set([
  "mcpServers",
  "mcp-servers",
  "mcp_servers",
  "hooks",
  "skills",
  "memory",
  "allowed-tools",
  "allowedTools",
  "allowed_tools",
  "capabilities",
]);

/** The `permissionMode` values that grant nothing beyond `tools:` (any other is a finding). */
export const SAFE_PERMISSION_MODES: ReadonlySet<string> = new Set(["default", "plan"]);

/** The `tools:` declaration as read. */
export type ToolsDecl =
  | { readonly shape: "missing" }
  | { readonly shape: "null" | "empty" | "bad"; readonly line: number; readonly column: number }
  | {
    readonly shape: "line" | "block";
    readonly names: readonly { name: string; line: number; column: number }[];
    /** First and last front-matter lines (1-based, of the file) of the declaration. */
    readonly line: number;
    readonly lastLine: number;
    readonly column: number;
  };

const NULLISH = /^(~|null|Null|NULL)?$/;

/**
 * Reads the `tools:` declaration of a front matter: a one-line comma string or flow list, or a
 * clean block list of `- item` lines; anything else is `bad`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readFrontMatter } from "./front_matter.ts";
 * import { toolsDecl } from "./check_markdown.ts";
 * assert.equal(toolsDecl(readFrontMatter("---\ntools: Read, Grep\n---\n")).shape, "line");
 * ```
 */
export function toolsDecl(fm: FrontMatter): ToolsDecl {
  const root = fm.root;
  if (root === null || root.kind !== "map") return { shape: "missing" };
  const pair = root.pairs.find((p) => p.key === "tools");
  if (pair === undefined) return { shape: "missing" };
  const kl = pair.keyPlace.line;
  const kc = pair.keyPlace.column;
  const lineText = fm.lines[kl - 2] ?? "";
  const v = pair.value;
  if (v === null || (v.kind === "scalar" && v.value === null)) {
    // `tools:` with nothing, `~` or `null`.
    return { shape: "null", line: kl, column: kc };
  }
  if (v.kind === "scalar") {
    if (v.style !== "PLAIN" && v.style !== "QUOTE_DOUBLE" && v.style !== "QUOTE_SINGLE") {
      return { shape: "bad", line: kl, column: kc };
    }
    if (v.line !== kl || lastLineOf(fm, v) !== kl) return { shape: "bad", line: kl, column: kc };
    const s = String(v.value).trim();
    if (s === "" || NULLISH.test(s) && v.style === "PLAIN") {
      return { shape: s === "" ? "empty" : "null", line: kl, column: kc };
    }
    const names = s.split(",").map((x) => x.trim()).filter((x) => x !== "");
    if (names.length === 0) return { shape: "empty", line: kl, column: kc };
    return {
      shape: "line",
      names: names.map((name) => ({ name, line: kl, column: v.column })),
      line: kl,
      lastLine: kl,
      column: kc,
    };
  }
  if (v.kind === "seq") {
    if (v.items.length === 0) return { shape: "empty", line: kl, column: kc };
    const names: { name: string; line: number; column: number }[] = [];
    for (const it of v.items) {
      if (
        it === null || it.kind !== "scalar" || it.value === null || it.style === "BLOCK_LITERAL" ||
        it.style === "BLOCK_FOLDED"
      ) {
        return { shape: "bad", line: kl, column: kc };
      }
      names.push({ name: String(it.value).trim(), line: it.line, column: it.column });
    }
    if (v.flow) {
      if (v.line !== kl || lastLineOf(fm, v) !== kl) return { shape: "bad", line: kl, column: kc };
      if (/#/.test(lineText.slice(0, lineText.lastIndexOf("]")))) {
        return { shape: "bad", line: kl, column: kc };
      }
      return { shape: "line", names, line: kl, lastLine: kl, column: kc };
    }
    // A clean block list: `tools:` alone on its line, then one `- item` line per item.
    if (!/^tools:[ \t]*$/.test(lineText)) return { shape: "bad", line: kl, column: kc };
    for (let i = 0; i < names.length; i++) {
      const text = fm.lines[kl - 1 + i] ?? "";
      if (!/^[ ]*- [^#\s][^#]*$/.test(text) || names[i].line !== kl + 1 + i) {
        return { shape: "bad", line: kl, column: kc };
      }
    }
    const next = fm.lines[kl - 1 + names.length];
    if (next !== undefined && /^[ ]+\S/.test(next)) return { shape: "bad", line: kl, column: kc };
    return { shape: "block", names, line: kl, lastLine: kl + names.length, column: kc };
  }
  return { shape: "bad", line: kl, column: kc };
}

function lastLineOf(fm: FrontMatter, v: YNode): number {
  // The line the node ends on, counted from its start offset within the front matter text.
  const inner = fm.yamlText.slice(v.start, Math.max(v.start, v.end));
  return v.line + (inner.replace(/\n+$/, "").match(/\n/g)?.length ?? 0);
}

/**
 * Checks a Markdown agent's front matter. Claude's Bash is a warning; every other shell an error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readFrontMatter } from "./front_matter.ts";
 * import { checkMarkdown } from "./check_markdown.ts";
 * const fm = readFrontMatter("---\nname: w\ntools: Read, Edit\n---\n");
 * assert.deepEqual(checkMarkdown(fm, "claude", "w").map((s) => s.code), ["TOOL_WRITE"]);
 * ```
 */
export function checkMarkdown(
  fm: FrontMatter,
  framework: "claude" | "copilot",
  slug: string,
): Spot[] {
  const out: Spot[] = [];
  const who = `'${slug}'`;
  if (!fm.present) {
    out.push(
      spot(
        "FM_MISSING",
        1,
        1,
        `${who} has no front matter, so it declares no \`tools:\` and may inherit every tool; ` +
          "start the file with `---`, `tools: Read, Grep, Glob`, `---`",
      ),
    );
    return out;
  }
  if (fm.root === null && fm.spots.length > 0) return out; // the reader's findings say why
  if (fm.root !== null && fm.root.kind !== "map") {
    out.push(
      spot("YAML_NOT_MAPPING", fm.root.line, fm.root.column, "the front matter is not a mapping"),
    );
    return out;
  }
  const root: YMap | null = fm.root;
  if (root !== null) {
    for (const p of root.pairs) {
      if (CAPABILITY_KEYS.has(p.key)) {
        out.push(
          spot(
            "CAPABILITY_KEY",
            p.keyPlace.line,
            p.keyPlace.column,
            `${who} declares \`${p.key}:\`, which grants what \`tools:\` doesn't show; remove it`,
          ),
        );
      }
      if (p.key === "permissionMode") {
        const mode = p.value?.kind === "scalar" ? String(p.value.value) : "(not a word)";
        if (!SAFE_PERMISSION_MODES.has(mode)) {
          out.push(
            spot(
              "PERMISSION_MODE",
              p.keyPlace.line,
              p.keyPlace.column,
              `${who} sets permissionMode ${JSON.stringify(mode)}; use "default" or "plan"`,
            ),
          );
        }
      }
    }
  }
  const decl = toolsDecl(fm);
  const dupTools = root !== null && root.pairs.filter((p) => p.key === "tools").length > 1;
  if (dupTools) return out; // YAML_DUPLICATE_KEY names it; which copy wins differs per host
  switch (decl.shape) {
    case "missing":
      out.push(
        spot(
          "TOOLS_MISSING",
          1,
          1,
          `${who} has no \`tools:\` declaration, so the agent inherits every tool, writes ` +
            "included; add `tools: Read, Grep, Glob`",
        ),
      );
      return out;
    case "null":
    case "empty":
    case "bad":
      out.push(
        spot(
          SHAPE_SPOT[decl.shape][0],
          decl.line,
          decl.column,
          `${who} ${SHAPE_SPOT[decl.shape][1]}`,
        ),
      );
      return out;
  }
  const by = {
    write: [] as string[],
    shell: [] as string[],
    dispatch: [] as string[],
    unknown: [] as string[],
  };
  const first: Record<string, { line: number; column: number }> = {};
  for (const n of decl.names) {
    const c = classifyTool(framework === "copilot" ? copilotAlias(n.name) : n.name);
    if (c === "read") continue;
    by[c].push(n.name);
    first[c] ??= { line: n.line, column: n.column };
  }
  const list = (xs: string[]) => xs.join(", ");
  if (by.write.length > 0) {
    out.push(
      spot(
        "TOOL_WRITE",
        first.write.line,
        first.write.column,
        `${who} declares write tool(s) ${list(by.write)}`,
      ),
    );
  }
  if (by.dispatch.length > 0) {
    out.push(
      spot(
        "TOOL_DISPATCH",
        first.dispatch.line,
        first.dispatch.column,
        `${who} declares dispatch (${list(by.dispatch)}), which can start a subagent that writes`,
      ),
    );
  }
  if (by.unknown.length > 0) {
    out.push(
      spot(
        "TOOL_UNKNOWN",
        first.unknown.line,
        first.unknown.column,
        `${who} declares tool(s) this check can't classify as read-only: ${list(by.unknown)}`,
      ),
    );
  }
  if (by.shell.length > 0) {
    out.push(
      spot(
        framework === "claude" ? "TOOL_SHELL_WARN" : "TOOL_SHELL",
        first.shell.line,
        first.shell.column,
        `${who} declares a shell (${list(by.shell)}); agents hold no shell under the switch`,
      ),
    );
  }
  return out;
}

/**
 * What a `tools:` that declares nothing usable is, by its shape. (Claude Code grants a null or
 * empty `tools:` no tools, lib/audit/hosts/claude.ts; the Copilot CLI refuses a null one and
 * grants an empty list nothing, lib/audit/hosts/copilot.ts; other readers differ, so the
 * shapes stay errors.)
 */
const SHAPE_SPOT = {
  null: [
    "TOOLS_NULL",
    "has a null `tools:`, which hosts read differently (no tools, no declaration)",
  ],
  empty: [
    "TOOLS_EMPTY",
    "has an empty `tools:`, which hosts read differently (no tools, no restriction)",
  ],
  bad: ["TOOLS_SHAPE", "writes `tools:` in a shape other than one line or a clean `- item` list"],
} as const;

/**
 * Copilot's documented aliases of its tool sets, mapped onto the canonical tokens.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copilotAlias } from "./check_markdown.ts";
 * assert.equal(copilotAlias("MultiEdit"), "edit");
 * ```
 */
export function copilotAlias(name: string): string {
  const n = name.trim().toLowerCase();
  const map: Record<string, string> = {
    notebookread: "read",
    grep: "search",
    glob: "search",
    multiedit: "edit",
    notebookedit: "edit",
    "custom-agent": "agent",
  };
  return map[n] ?? name;
}

/**
 * The audit's strict reading of a Markdown agent's `tools:` as a grant (for the host models'
 * judgement): no front matter or no `tools:`, every tool; a clean declaration, its names; a
 * `tools:` the strict reader refuses (null, empty, another shape, repeated, or YAML it can't
 * read), null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readFrontMatter } from "./front_matter.ts";
 * import { strictGrant } from "./check_markdown.ts";
 * assert.deepEqual(strictGrant(readFrontMatter("---\ntools: Read, Edit\n---\n")).grant, {
 *   all: false,
 *   names: ["Read", "Edit"],
 * });
 * ```
 */
export function strictGrant(fm: FrontMatter): StrictReading {
  const at = { line: 1, column: 1 };
  if (!fm.present) return { grant: { all: true }, ...at };
  const root = fm.root;
  if (root === null || root.kind !== "map") return { grant: null, ...at };
  const tools = root.pairs.filter((p) => p.key === "tools");
  if (tools.length > 1) {
    return { grant: null, line: tools[0].keyPlace.line, column: tools[0].keyPlace.column };
  }
  const decl = toolsDecl(fm);
  switch (decl.shape) {
    case "missing":
      return { grant: { all: true }, ...at };
    case "null":
    case "empty":
    case "bad":
      return { grant: null, line: decl.line, column: decl.column };
    default:
      return {
        grant: { all: false, names: decl.names.map((n) => n.name) },
        line: decl.line,
        column: decl.column,
      };
  }
}
