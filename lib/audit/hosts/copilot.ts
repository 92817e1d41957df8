/**
 * The GitHub Copilot CLI's reading of a custom agent file (`.github/agents/*.agent.md`), taken
 * from Copilot CLI 1.0.102 (npm `@github/copilot-linux-x64@1.0.102`): its agent files are read
 * by the native module `prebuilds/linux-x64/runtime.node` (Rust, `src/native/frontmatter`, YAML by
 * serde_yaml 0.9.34), whose export `customAgentsParseMarkdown` the host corpus was read with:
 *
 * 1. one BOM is dropped; the first line must be `---` (trailing blanks and a CR allowed), the
 *    front matter ends at the next such line (`--- x` is no end: the file is refused);
 * 2. the YAML is strict: a syntax error or a duplicate key refuses the file (not loaded); merge
 *    keys are not applied (`<<` is an unknown field);
 * 3. the root must be a mapping and `description` a string (`name` may be absent);
 * 4. `tools` absent: every tool (`["*"]`); null, a number or a mapping: the file is refused; a
 *    string is split at commas (no parentheses rule), each name trimmed, empty ones dropped; a
 *    list must hold only strings; `*` among the names: every tool.
 *
 * Which files it loads (`customAgentsDiscoverJson` of the same module, run on crafted trees):
 * every `*.md` below `.github/agents/` **and below `.claude/agents/`**, subfolders included
 * (`.github/agents/sub/x.md` is the agent `sub--x`), in the start directory and **each parent up
 * to the git repository's root** (a real repository: an empty `.git` folder does not stop it), or
 * up to `/` outside one; HOME does not stop it (only HOME's own `.claude/agents` is left out).
 * {@link copilotAgentDirs} is that walk; the audit reads `.claude/agents/` files with this
 * reader too.
 *
 * VS Code's own reader of `.agent.md`/`.chatmode.md` is not modeled here (see docs/audit.md).
 *
 * @module
 */
import { parseDocument } from "yaml";
import { dirname } from "../../fs/path.ts";
import { composedReading, withYamlEnv } from "../yaml_once.ts";
import { unmodeledCharacter } from "./bun_yaml.ts";
import { ALL, type Grant, type HostReading, notAnAgent } from "./grant.ts";
import { plainFlatMap } from "../plain_yaml.ts";

const FENCE = /^---[ \t]*\r?$/;

/**
 * The Copilot CLI's reading of a custom agent file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copilotCliReading } from "./copilot.ts";
 * assert.deepEqual(copilotCliReading("---\ndescription: d\n---\nbody\n").grant, { all: true });
 * ```
 */
export function copilotCliReading(text: string): HostReading {
  const host = "Copilot CLI 1.0.102";
  const none = (how: string, uncertain?: string): HostReading => notAnAgent(host, how, uncertain);
  const fm = copilotFrontMatter(text);
  if (fm === undefined) return none("finds no front matter");
  if (fm === null) return none("finds no closing `---` line, so refuses the file");
  const how = "reads the front matter as strict YAML";
  const odd = unmodeledCharacter(fm);
  if (odd !== null) return none(how, odd);
  const read = copilotYaml(fm);
  if (!read.ok) return none(`${how}, which fails, so refuses the file`);
  const value = read.value;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return none("finds no mapping, so refuses the file");
  }
  const m = value as Record<string, unknown>;
  if (typeof m.description !== "string") return none("finds no description, so refuses the file");
  if ("name" in m && m.name !== undefined && typeof m.name !== "string") {
    return none("finds a name that is not a string, so refuses the file");
  }
  const grant = copilotToolsGrant(m.tools);
  return grant === null
    ? none("finds a `tools:` that is neither a list nor a string, so refuses the file")
    : { host, how, agent: true, grant };
}

/**
 * The front matter as the Copilot CLI cuts it (its lines between the fences, each without its
 * CR, joined by LF), undefined when the first line is no fence, null when no fence closes it.
 * Only the lines up to the closing fence are looked at.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copilotFrontMatter } from "./copilot.ts";
 * assert.equal(copilotFrontMatter("\uFEFF---\r\na: 1\r\n---\r\nbody\n"), "a: 1");
 * assert.equal(copilotFrontMatter("---\na: 1\n--- x\n"), null);
 * assert.equal(copilotFrontMatter("# title\n"), undefined);
 * ```
 */
export function copilotFrontMatter(text: string): string | null | undefined {
  const t = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines: string[] = [];
  for (let from = 0;;) {
    const nl = t.indexOf("\n", from);
    const line = t.slice(from, nl < 0 ? t.length : nl);
    if (FENCE.test(line)) {
      if (from === 0) lines.push(line);
      else return lines.slice(1).join("\n");
    } else if (from === 0) return undefined;
    else lines.push(line.endsWith("\r") ? line.slice(0, -1) : line);
    if (nl < 0) return null;
    from = nl + 1;
  }
}

/** A block scalar's header: `|` or `>` at a line's start or after a blank. */
const BLOCK_SCALAR = /(?:^|[ \t])[|>]/m;
/** A last line a final line break can't change: a key or list item and words, no tab. */
const PLAIN_LAST = /(?:^|\n) *(?:- )?[A-Za-z_][^\t\r\n]*$/;

/**
 * What the Copilot CLI's strict YAML (serde_yaml, modeled by the `yaml` package: YAML 1.2, a
 * duplicate key an error, no merge keys) gives for a front matter: its value, or a refusal. The
 * fast path (lib/audit/plain_yaml.ts) answers for plain text; else the strict reader's one compose
 * of the same front matter tells (lib/audit/yaml_once.ts), when the line break it ends with and
 * this text lacks can't change the reading (no block scalar, whose chomping keeps it); else the
 * text is parsed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copilotYaml } from "./copilot.ts";
 * assert.deepEqual(copilotYaml("tools: [read]"), { ok: true, value: { tools: ["read"] } });
 * assert.deepEqual(copilotYaml("tools: read\ntools: edit"), { ok: false });
 * ```
 */
export function copilotYaml(fm: string): { ok: true; value: unknown } | { ok: false } {
  const plain = plainFlatMap(fm);
  if (plain !== null) return { ok: true, value: plain };
  if (copilotSharesCompose(fm)) {
    const once = composedReading(`${fm}\n`);
    if (once !== null) return once.ok ? { ok: true, value: once.value } : { ok: false };
  }
  return copilotYamlParsed(fm);
}

/**
 * Whether the strict reader's compose of `fm` and a final line break reads as `fm` does: no
 * block scalar (whose chomping keeps that line break), and a last line that is a key or a list
 * item and words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copilotSharesCompose } from "./copilot.ts";
 * assert.equal(copilotSharesCompose("tools:\n  - read"), true);
 * assert.equal(copilotSharesCompose("notes: |\n  x"), false);
 * ```
 */
export function copilotSharesCompose(fm: string): boolean {
  return PLAIN_LAST.test(fm) && !BLOCK_SCALAR.test(fm);
}

/**
 * {@link copilotYaml} by the parser alone, whatever the text (what the shared readings must
 * equal wherever they answer).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copilotYamlParsed } from "./copilot.ts";
 * assert.deepEqual(copilotYamlParsed("a: 1"), { ok: true, value: { a: 1 } });
 * ```
 */
export function copilotYamlParsed(fm: string): { ok: true; value: unknown } | { ok: false } {
  const doc = withYamlEnv(() =>
    parseDocument(fm, { version: "1.2", uniqueKeys: true, merge: false })
  );
  if (doc.errors.length > 0) return { ok: false };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch {
    return { ok: false };
  }
}

/**
 * What a Copilot CLI `tools` value grants, or null when the host refuses it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copilotToolsGrant } from "./copilot.ts";
 * assert.deepEqual(copilotToolsGrant("read,, edit"), { all: false, names: ["read", "edit"] });
 * assert.deepEqual(copilotToolsGrant(undefined), { all: true });
 * ```
 */
export function copilotToolsGrant(v: unknown): Grant | null {
  if (v === undefined) return ALL;
  let names: string[];
  if (typeof v === "string") {
    names = v.split(",").map((x) => x.trim()).filter((x) => x !== "");
  } else if (Array.isArray(v) && v.every((x) => typeof x === "string")) {
    names = [...v] as string[];
  } else return null;
  return names.includes("*") ? ALL : { all: false, names };
}

/**
 * The directories whose `.github/agents/` (and, but at HOME, `.claude/agents/`) the Copilot CLI
 * 1.0.102 loads for a session started in `cwd`, nearest first: `cwd` and each parent up to and
 * including `gitRoot` (the repository's root), else up to `/`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { copilotAgentDirs } from "./copilot.ts";
 * assert.deepEqual(copilotAgentDirs("/r/a/b", "/r"), ["/r/a/b", "/r/a", "/r"]);
 * assert.deepEqual(copilotAgentDirs("/s/p", null), ["/s/p", "/s", "/"]);
 * ```
 */
export function copilotAgentDirs(cwd: string, gitRoot: string | null): string[] {
  const out: string[] = [];
  let k = cwd;
  while (true) {
    out.push(k);
    if (k === gitRoot) break;
    const up = dirname(k);
    if (up === k) break;
    k = up;
  }
  return out;
}
