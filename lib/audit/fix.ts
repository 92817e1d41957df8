/**
 * `audit --fix`: narrows what can be narrowed cleanly and keeps every other byte. Claude's
 * `tools:` becomes `Read, Grep, Glob` (plus `TodoWrite` where a todo tool was declared), Copilot's
 * the declared read-only tokens, a Codex agent's `sandbox_mode` `"read-only"`, and a Markdown
 * agent missing its write-policy section gets it appended inside fences (so a rerun finds it and
 * changes nothing); a Codex agent missing it gets it in `developer_instructions`. A Codex edit is
 * accepted only when smol-toml reads the rewritten file as the original with just that change
 * (so a `[` or `sandbox_mode =` inside a multi-line string is never taken for TOML). A file whose
 * needed change has no clean rewrite is refused whole and left as it is. Pure: text in, text
 * out; the command writes it through the anchored write (no link followed).
 *
 * @module
 */
import { readToml } from "./check_codex.ts";
import { CAPABILITY_KEYS, SAFE_PERMISSION_MODES, toolsDecl } from "./check_markdown.ts";
import { frontMatterTooLarge, readFrontMatter } from "./front_matter.ts";
import { AGENT_HEADING, checkFile, type FileKind, ORCH_HEADING } from "./team.ts";
import { classifyTool, narrowedClaudeTools, narrowedCopilotTools } from "./tools.ts";

/** The fences the appended section sits in. */
const FENCE_BEGIN = "<!-- AGENTTEAMS:BEGIN write_policy v=1 -->";
/** The closing fence. */
const FENCE_END = "<!-- AGENTTEAMS:END write_policy -->";

/**
 * The reference file the non-orchestrator section points at (the artifacts' forms, the exit
 * codes), relative to the project: `agentteams init` writes it.
 */
export const WRITE_POLICY_REFERENCE = "references/write-policy.reference.md";

/** The body of the non-orchestrator section. */
const AGENT_SECTION = [
  AGENT_HEADING,
  "",
  "You never write files, run commands or start other agents. Every change you want is returned",
  "to the orchestrator as a change proposal or a deletion proposal, and every command as a",
  `command request, each bound to your dispatch nonce; ${WRITE_POLICY_REFERENCE}`,
  "gives their forms and the exit codes (`agentteams init` writes it).",
  "This section overrides any write wording elsewhere in this file.",
];

/** The body of the orchestrator's section. */
const ORCH_SECTION = [
  ORCH_HEADING,
  "",
  "You are the only writer. Issue a dispatch nonce for each agent you start; apply its change and",
  "deletion proposals with `agentteams apply` and run its command requests with `agentteams run`",
  "(through the runner under the switch); never retry a refused artifact by hand; verify the",
  "ledger with `agentteams ledger verify` at closeout.",
];

/** What fixing one file gives. */
export type FixResult =
  | { readonly outcome: "fixed"; readonly text: string; readonly changes: readonly string[] }
  | { readonly outcome: "unchanged" }
  | { readonly outcome: "refused"; readonly reason: string };

/**
 * Whether a file is one the generator wrote (it carries the AGENTTEAMS fences or marker); other
 * files are adopted and `--fix` leaves them alone unless they are named.
 *
 * @example
 * ```ts
 * import { isGenerated } from "./fix.ts";
 * isGenerated("---\ntools: Read\n---\n"); // false
 * ```
 */
export function isGenerated(text: string): boolean {
  return text.includes("<!-- AGENTTEAMS:BEGIN") || /^#\s*agentteams-/m.test(text);
}

/**
 * Fixes one file's text (`rel`: its path, which a Goose recipe's check reads its slug and JSON
 * form from, as the audit does).
 *
 * @example
 * ```ts
 * import { fixText } from "./fix.ts";
 * const r = fixText("claude", "w.md", "---\nname: w\ntools: Read, Edit\n---\nbody\n", false);
 * r.outcome === "fixed" && r.text.includes("tools: Read, Grep, Glob"); // true
 * ```
 */
export function fixText(kind: FileKind, rel: string, text: string, exempt: boolean): FixResult {
  switch (kind) {
    case "claude":
    case "copilot": {
      const r = fixMarkdown(kind, text, exempt);
      // A file the audit finds nothing in has nothing to fix: no rewrite is not a refusal.
      return r.outcome === "refused" && checkFile(kind, rel, text, exempt).length === 0
        ? { outcome: "unchanged" }
        : r;
    }
    case "codex-agent":
      return fixCodex(text, exempt);
    case "goose":
      return checkFile(kind, rel, text, exempt).length === 0 ? { outcome: "unchanged" } : {
        outcome: "refused",
        reason: "Goose recipes are not rewritten: edit the recipe by hand as its findings say, " +
          "or regenerate it",
      };
    default:
      return { outcome: "unchanged" };
  }
}

function fixMarkdown(kind: "claude" | "copilot", text: string, exempt: boolean): FixResult {
  if (frontMatterTooLarge(text) !== null) {
    return {
      outcome: "refused",
      reason: "its front matter is larger than the audit reads; shorten it by hand",
    };
  }
  const fm = readFrontMatter(text);
  // FM_LENIENT (a value with ": " unquoted) is a warning the rewrite leaves as it is.
  const blocking = (spots: readonly { code: string }[]) =>
    spots.filter((s) => s.code !== "FM_LENIENT");
  if (blocking(fm.spots).length > 0) {
    return {
      outcome: "refused",
      reason: `its front matter has ${blocking(fm.spots)[0].code}; fix it by hand`,
    };
  }
  if (!fm.present || fm.root === null || fm.root.kind !== "map") {
    return {
      outcome: "refused",
      reason:
        "it has no front matter to narrow; start it with `---`, `tools: Read, Grep, Glob`, `---` by hand",
    };
  }
  if (fm.root.flow) {
    return {
      outcome: "refused",
      reason:
        "its front matter is a flow mapping ({...}); rewrite it as `key: value` lines by hand",
    };
  }
  const lines = text.split("\n");
  const changes: string[] = [];
  // Edits as [first line index, count, replacement lines], applied bottom-up.
  const edits: [number, number, string[]][] = [];
  if (!exempt) {
    for (const p of fm.root.pairs) {
      if (!CAPABILITY_KEYS.has(p.key)) continue;
      const i = p.keyPlace.line - 1;
      const oneLine = p.value !== null && p.value.kind === "scalar" &&
        p.value.line === p.keyPlace.line &&
        (lines[i + 1] === undefined || !/^[ \t]+\S/.test(lines[i + 1]));
      if (p.key === "allowed-tools" && oneLine) {
        edits.push([i, 1, []]);
        changes.push("removed allowed-tools");
      } else {
        return {
          outcome: "refused",
          reason: `it declares \`${p.key}:\`, which --fix doesn't remove; remove it by hand`,
        };
      }
    }
    const mode = fm.root.pairs.find((p) => p.key === "permissionMode");
    if (mode !== undefined) {
      const v = mode.value?.kind === "scalar" ? String(mode.value.value) : "";
      if (!SAFE_PERMISSION_MODES.has(v)) {
        return {
          outcome: "refused",
          reason: `its permissionMode ${
            JSON.stringify(v)
          } is the operator's call; change or remove it by hand`,
        };
      }
    }
    const decl = toolsDecl(fm);
    const narrow = (names: readonly string[]) =>
      kind === "claude" ? narrowedClaudeTools(names) : narrowedCopilotTools(names);
    if (decl.shape === "missing") {
      edits.push([1, 0, [`tools: ${narrow([])}`]]);
      changes.push("added tools:");
    } else if (decl.shape === "null" || decl.shape === "empty") {
      if (!/^tools:/.test(lines[decl.line - 1] ?? "") || /^[ \t]+-/.test(lines[decl.line] ?? "")) {
        return {
          outcome: "refused",
          reason:
            "its `tools:` spans more than one line; write it on one line (`tools: Read, Grep, Glob`) by hand",
        };
      }
      edits.push([decl.line - 1, 1, [`tools: ${narrow([])}`]]);
      changes.push("narrowed tools:");
    } else if (decl.shape === "bad") {
      return {
        outcome: "refused",
        reason:
          "its `tools:` has a shape --fix can't rewrite cleanly; write it on one line (`tools: Read, Grep, Glob`) by hand",
      };
    } else if ("names" in decl) {
      const names = decl.names.map((n) => n.name);
      const allRead = names.every((n) => classifyTool(n) === "read");
      if (!allRead && !/^tools:/.test(lines[decl.line - 1] ?? "")) {
        return {
          outcome: "refused",
          reason: "its `tools:` key is not at the start of its line; move it there by hand",
        };
      }
      if (!allRead) {
        edits.push([decl.line - 1, decl.lastLine - decl.line + 1, [`tools: ${narrow(names)}`]]);
        changes.push("narrowed tools:");
      }
    }
  }
  const section = sectionAppend(text, exempt);
  if (section === "refused") {
    return {
      outcome: "refused",
      reason:
        "its Project-Specific Notes come before where the section must go; add the section above them by hand",
    };
  }
  edits.sort((a, b) => b[0] - a[0]);
  for (const [at, count, repl] of edits) lines.splice(at, count, ...repl);
  let out = lines.join("\n");
  if (section !== null) {
    out = (out.endsWith("\n") ? out : out + "\n") + section;
    changes.push(
      exempt ? "appended the Applying Proposals section" : "appended the write-policy section",
    );
  }
  if (changes.length === 0) return { outcome: "unchanged" };
  // The rewrite must read back cleanly, or the file is left as it is.
  if (blocking(readFrontMatter(out).spots).length > 0) {
    return {
      outcome: "refused",
      reason: "the rewrite would not read back cleanly; make the change by hand",
    };
  }
  return { outcome: "fixed", text: out, changes };
}

function sectionAppend(text: string, exempt: boolean): string | null | "refused" {
  const heading = exempt ? ORCH_HEADING : AGENT_HEADING;
  const re = new RegExp(`^[ \\t]*${heading.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[ \\t]*$`, "m");
  if (re.test(text)) return null;
  if (exempt && /^[ \t]*## Project-Specific Notes[ \t]*$/m.test(text)) return "refused";
  const body = exempt ? ORCH_SECTION : AGENT_SECTION;
  return `\n${FENCE_BEGIN}\n${body.join("\n")}\n${FENCE_END}\n`;
}

function fixCodex(text: string, exempt: boolean): FixResult {
  const r = readToml(text);
  if (!r.ok) return { outcome: "refused", reason: "its TOML doesn't parse; fix it by hand" };
  if (r.value.mcp_servers !== undefined && !exempt) {
    return {
      outcome: "refused",
      reason: "it declares mcp_servers, which --fix doesn't remove; remove them by hand",
    };
  }
  let out = text;
  let value = r.value;
  const changes: string[] = [];
  if (!exempt && value.sandbox_mode !== "read-only") {
    const next = setSandboxReadOnly(out, value);
    if (next === null) {
      return {
        outcome: "refused",
        reason: 'its sandbox_mode can\'t be rewritten cleanly; set sandbox_mode = "read-only" ' +
          "by hand",
      };
    }
    out = next.text;
    value = next.value;
    changes.push('set sandbox_mode = "read-only"');
  }
  const heading = exempt ? ORCH_HEADING : AGENT_HEADING;
  if (!hasHeading(value, heading)) {
    const next = appendInstructions(out, value, exempt);
    if (next === null) {
      return {
        outcome: "refused",
        reason: "its developer_instructions can't be extended cleanly; add the " +
          `"${heading.slice(3)}" section to them by hand`,
      };
    }
    out = next.text;
    changes.push(
      exempt
        ? "appended the Applying Proposals section to developer_instructions"
        : "appended the write-policy section to developer_instructions",
    );
  }
  return changes.length === 0 ? { outcome: "unchanged" } : { outcome: "fixed", text: out, changes };
}

/** Whether a string value of the agent carries the heading on a line of its own. */
function hasHeading(value: Record<string, unknown>, heading: string): boolean {
  const re = new RegExp(`^[ \\t]*${heading.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[ \\t]*$`, "m");
  return Object.values(value).some((v) => typeof v === "string" && re.test(v));
}

/** A parsed TOML value in one canonical text (keys sorted at every level), for comparisons. */
function canon(v: unknown): string {
  return JSON.stringify(
    v,
    (_k, x: unknown) =>
      x !== null && typeof x === "object" && !Array.isArray(x) && !(x instanceof Date)
        ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0
          ),
        )
        : x,
  );
}

/**
 * The first candidate rewrite that smol-toml reads as `want` exactly (every other key and value
 * as it was), or null when none does.
 */
function firstExact(
  candidates: Iterable<string>,
  want: Record<string, unknown>,
): { text: string; value: Record<string, unknown> } | null {
  const target = canon(want);
  for (const c of candidates) {
    const r = readToml(c);
    if (r.ok && canon(r.value) === target) return { text: c, value: r.value };
  }
  return null;
}

/** The line index after the file's leading comments and blank lines (a top-level key goes here). */
function topInsertAt(lines: readonly string[]): number {
  let i = 0;
  while (i < lines.length && /^[ \t]*(#.*)?$/.test(lines[i]) && i < lines.length - 1) i++;
  return i;
}

function setSandboxReadOnly(
  text: string,
  value: Record<string, unknown>,
): { text: string; value: Record<string, unknown> } | null {
  const want = { ...value, sandbox_mode: "read-only" };
  const lines = text.split("\n");
  function* candidates(): Generator<string> {
    if (value.sandbox_mode !== undefined) {
      for (const [i, l] of lines.entries()) {
        const m = /^([ \t]*sandbox_mode[ \t]*=[ \t]*)("[^"\\]*"|'[^']*')([ \t]*(#.*)?)$/.exec(l);
        if (m === null) continue;
        yield [...lines.slice(0, i), `${m[1]}"read-only"${m[3]}`, ...lines.slice(i + 1)].join("\n");
      }
    } else {
      // After the top-level keys (before the first line that looks like a table), else at the
      // top: the parse says whether the key landed at the top level.
      const table = lines.findIndex((l) => /^\s*\[/.test(l));
      const end = text.endsWith("\n") ? lines.length - 1 : lines.length;
      for (const at of [table < 0 ? end : table, topInsertAt(lines)]) {
        yield [...lines.slice(0, at), 'sandbox_mode = "read-only"', ...lines.slice(at)].join("\n");
      }
    }
  }
  return firstExact(candidates(), want);
}

function appendInstructions(
  text: string,
  value: Record<string, unknown>,
  exempt: boolean,
): { text: string } | null {
  const section = [FENCE_BEGIN, ...(exempt ? ORCH_SECTION : AGENT_SECTION), FENCE_END].join("\n");
  const old = value.developer_instructions;
  const lines = text.split("\n");
  if (old === undefined) {
    const at = topInsertAt(lines);
    const key = ["developer_instructions = '''", section, "'''"];
    const c = [...lines.slice(0, at), ...key, ...lines.slice(at)].join("\n");
    return firstExact([c], { ...value, developer_instructions: `${section}\n` });
  }
  if (typeof old !== "string") return null;
  const added = `${old.endsWith("\n") || old === "" ? "" : "\n"}\n${section}\n`;
  const want = { ...value, developer_instructions: old + added };
  function* candidates(): Generator<string> {
    // Before each closing delimiter of a multi-line string: the parse says which one is its.
    for (const q of ['"""', "'''"]) {
      for (let i = text.indexOf(q); i >= 0; i = text.indexOf(q, i + 1)) {
        yield text.slice(0, i) + added + text.slice(i);
      }
    }
  }
  return firstExact(candidates(), want);
}
