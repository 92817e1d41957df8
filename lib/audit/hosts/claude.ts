/**
 * Claude Code's reading of a subagent file (`.claude/agents/*.md`), in three versions, each taken
 * from the JavaScript the npm package ships:
 *
 * - **Claude Code 2.1.332** (npm `@anthropic-ai/claude-code-linux-x64@2.1.332`, the bundle inside
 *   the Bun binary `package/claude`; the front-matter reader `qd`, its YAML fallback `DDr` and
 *   re-quoting `_u`, the tools readers `bgn`/`yvt`/`Qf`, the agent loader `aUn`/`Bfo`):
 *   1. one BOM is dropped;
 *   2. the front matter is `/^---\s*\n([\s\S]*?)---\s*\n?/`: it ends at the first `---` after
 *      the opening one, anywhere, mid-line included (no match when `---` does not occur again);
 *   3. it is parsed with `Bun.YAML.parse`; on an error, each line
 *      `/^([a-zA-Z_-]+):\s+(\S.*)$/` whose value is not quoted at both ends, is not a flow list
 *      Bun parses as an array, and holds one of `{}[]*&#!|>%@\`` or `: ` is re-quoted as a
 *      double-quoted string (the `tools:` line included), leading tabs become two spaces each, and
 *      it is parsed again; a second error, or a value that is not a mapping, reads as `{}`;
 *   4. a file is an agent when `name` is a non-empty string not starting with `-` and holding no
 *      `:`, and `description` a non-empty string;
 *   5. `tools` absent: every tool; null, empty, `false`, `0`, or no string in it: no tools; a
 *      string, or the strings of a list, split at commas and spaces outside parentheses (`(` opens,
 *      any `)` closes, no nesting); a `*` among the names: every tool;
 *   6. a valid `memory` (`user`, `project`, `local`) adds Read, Write and Edit to a listed grant.
 * - **Claude Code 2.1.42** (npm `@anthropic-ai/claude-code@2.1.42`, `cli.js`: `bj`, `_M5`, `l8A`,
 *   `Lu9`, `Jc`), still in use, read two ways: under Node (the npm install) its YAML is the `yaml`
 *   package's `parse` (2.3.1 bundled: duplicate keys and several documents are errors, merge keys
 *   are plain keys), under Bun (a native install) `Bun.YAML.parse`; no BOM drop; its retry
 *   re-quotes each line `/^([a-zA-Z_-]+):\s+(.+)$/` whose value is not quoted at both ends and
 *   holds one of `{}[]*&#!|>%@\`` (`: ` does not count, flow lists are re-quoted too, tabs stay);
 *   `name` and `description` non-empty strings; tools and `memory` as 2.1.332.
 * - **Claude Code 2.0.54** (npm `@anthropic-ai/claude-code@2.0.54`, `cli.js`: `LF`, `k1A`, `Bk2`,
 *   `_1A`, `xh5`), still in use: the same boundary without the BOM drop, and no YAML at all: each
 *   line with a `:` past its first character is `key: value`, both trimmed, one leading and one
 *   trailing quote removed, the last line of a key winning (a line inside a block scalar or list
 *   counts too); `tools` is then always a string, split as above, empty meaning no tools.
 *
 * @module
 */
import { parse as yamlParse } from "yaml";
import { bunYamlParse, type BunYamlResult } from "./bun_yaml.ts";
import { plainFlatMap } from "../plain_yaml.ts";
import { composedReading, withYamlEnv } from "../yaml_once.ts";
import { ALL, type Grant, type HostReading, notAnAgent } from "./grant.ts";

/** The versions modeled, newest first. */
export const CLAUDE_VERSIONS = ["2.1.332", "2.1.42", "2.0.54"] as const;

/** Claude Code's front-matter pattern (every modeled version). */
export const CLAUDE_FRONT_MATTER = /^---\s*\n([\s\S]*?)---\s*\n?/;

/** The characters that make 2.1.332's retry re-quote a value. */
const REQUOTE_WHEN = /[{}[\]*&#!|>%@`]|: /;

/**
 * A name that can resolve to a tool: the host looks the part before `(` up exactly, case
 * included, among its tools (2.0.54's `wJA`: a `Map` of tool names), whose names are
 * capitalized (`Read`, `Edit`, `Bash`) or `mcp__server__tool`; so a token such as `[Read`,
 * `Edit]` (a flow list the 2.0.54 line reader kept as text), `#` or `only` (a comment the line
 * reader kept) grants nothing. A capitalized name the audit doesn't know still counts.
 */
const CAN_NAME_A_TOOL = /^(?:[A-Z][A-Za-z0-9_]*|mcp__[A-Za-z0-9_.-]+)(?:\(.*)?$/s;

/**
 * A grant without the names that can't resolve to any tool (see `CAN_NAME_A_TOOL`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeResolvable } from "./claude.ts";
 * assert.deepEqual(claudeResolvable({ all: false, names: ["[Read", "Edit", "only"] }), { all: false, names: ["Edit"] });
 * ```
 */
export function claudeResolvable(g: Grant): Grant {
  if (g.all) return g;
  return { all: false, names: [...new Set(g.names.filter((n) => CAN_NAME_A_TOOL.test(n)))] };
}

/** Tools that a valid `memory:` adds (2.1.332). */
const MEMORY_TOOLS = ["Write", "Edit", "Read"];

/**
 * The front matter's text as Claude Code cuts it, or null when it finds none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeFrontMatter } from "./claude.ts";
 * assert.equal(claudeFrontMatter("---\nname: a --- b\n---\n", true), "name: a ");
 * ```
 */
export function claudeFrontMatter(text: string, dropBom: boolean): string | null {
  const t = dropBom && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (t.indexOf("---", 3) < 0) return null;
  const m = CLAUDE_FRONT_MATTER.exec(t);
  return m === null ? null : (m[1] ?? "");
}

/**
 * Claude Code 2.1.332's second attempt at a front matter that failed to parse: the values it
 * re-quotes (see the module doc), then leading tabs as two spaces each.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeRequote } from "./claude.ts";
 * assert.equal(
 *   claudeRequote("description: a: b\ntools: Read # x\n"),
 *   'description: "a: b"\ntools: "Read # x"\n',
 * );
 * ```
 */
export function claudeRequote(fm: string): string {
  const out = fm.split("\n").map((line) => {
    const m = /^([a-zA-Z_-]+):\s+(\S.*)$/.exec(line);
    if (m === null) return line;
    const [, key, v] = m;
    if (!key || !v) return line;
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) {
      return line;
    }
    if (v.startsWith("[") && v.endsWith("]")) {
      const r = bunYamlParse(v);
      if (r.ok === true && Array.isArray(r.value)) return line;
    }
    if (REQUOTE_WHEN.test(v)) {
      return `${key}: "${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
    }
    return line;
  }).join("\n");
  return out.replace(/^\t+/gm, (t) => "  ".repeat(t.length));
}

/** The characters that make 2.1.42's retry re-quote a value. */
const REQUOTE_WHEN_2_1_42 = /[{}[\]*&#!|>%@`]/;

/**
 * Claude Code 2.1.42's second attempt: each line `key: value` whose value is not quoted at both
 * ends and holds one of `{}[]*&#!|>%@\`` double-quoted; nothing else changes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeRequote2_1_42 } from "./claude.ts";
 * assert.equal(claudeRequote2_1_42("tools: [Read, Edit]\n"), 'tools: "[Read, Edit]"\n');
 * ```
 */
export function claudeRequote2_1_42(fm: string): string {
  return fm.split("\n").map((line) => {
    const m = /^([a-zA-Z_-]+):\s+(.+)$/.exec(line);
    if (m === null) return line;
    const [, key, v] = m;
    if (!key || !v) return line;
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) {
      return line;
    }
    if (!REQUOTE_WHEN_2_1_42.test(v)) return line;
    return `${key}: "${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  }).join("\n");
}

/** The `yaml` package's `parse` (what 2.1.42 calls under Node), as a result. */
function yamlPackageParse(text: string): BunYamlResult {
  const plain = plainFlatMap(text);
  if (plain !== null) return { ok: true, value: plain };
  // The audit's one compose of this text tells, for most texts (lib/audit/yaml_once.ts).
  const once = composedReading(text);
  if (once !== null) {
    return once.ok ? { ok: true, value: once.value } : { ok: false, error: once.error };
  }
  try {
    return { ok: true, value: withYamlEnv(() => yamlParse(text, { logLevel: "error" })) ?? null };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * Claude Code's split of tool lists (`Qf` in 2.1.332, `k1A` in 2.0.54): commas and spaces
 * outside parentheses end a name; `(` opens, any `)` closes (no nesting); whitespace before a
 * name is dropped, and each name trimmed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeSplitTools } from "./claude.ts";
 * assert.deepEqual(claudeSplitTools(["Read(a b) Edit,Bash(x, y)"]), ["Read(a b)", "Edit", "Bash(x, y)"]);
 * ```
 */
export function claudeSplitTools(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    if (!v) continue;
    let cur = "";
    let inParen = false;
    for (const ch of v) {
      switch (ch) {
        case "(":
          inParen = true;
          cur += ch;
          break;
        case ")":
          inParen = false;
          cur += ch;
          break;
        case ",":
          if (inParen) cur += ch;
          else {
            if (cur.trim()) out.push(cur.trim());
            cur = "";
          }
          break;
        case " ":
          if (inParen) cur += ch;
          else if (cur.trim()) {
            out.push(cur.trim());
            cur = "";
          }
          break;
        default:
          if (cur || ch.trim()) cur += ch;
      }
    }
    if (cur.trim()) out.push(cur.trim());
  }
  return out;
}

/**
 * What a `tools` value grants (`bgn`/`yvt`): absent, every tool; null or falsy, none; a string
 * or the strings of a list, split; `*` among them, every tool.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeToolsGrant } from "./claude.ts";
 * assert.deepEqual(claudeToolsGrant("Read, *"), { all: true });
 * assert.deepEqual(claudeToolsGrant(null), { all: false, names: [] });
 * ```
 */
export function claudeToolsGrant(v: unknown): Grant {
  if (v === undefined) return ALL;
  if (v === null || !v) return { all: false, names: [] };
  const list = typeof v === "string"
    ? [v]
    : Array.isArray(v)
    ? v.filter((x): x is string => typeof x === "string")
    : [];
  if (list.length === 0) return { all: false, names: [] };
  const names = claudeSplitTools(list);
  return names.includes("*") ? ALL : { all: false, names };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Whether a front matter makes the file an agent (`aUn` and `Bfo` in 2.1.332, which also refuse
 * a name starting with `-` or holding `:` when `strictName`; `Lu9` in 2.1.42).
 */
function isAgent(fm: Record<string, unknown>, strictName: boolean): boolean {
  const { name, description } = fm;
  if (typeof name !== "string" || name === "") return false;
  if (strictName && (name.startsWith("-") || name.normalize("NFKC").includes(":"))) return false;
  return typeof description === "string" && description !== "";
}

/** How one YAML-era Claude Code version reads a file. */
interface YamlEra {
  readonly host: string;
  readonly dropBom: boolean;
  readonly parse: (text: string) => BunYamlResult;
  readonly parser: string;
  readonly requote: (fm: string) => string;
  readonly strictName: boolean;
}

function yamlEraReading(era: YamlEra, text: string): HostReading {
  const { host } = era;
  const fm = claudeFrontMatter(text, era.dropBom);
  const none = (how: string, uncertain?: string): HostReading => notAnAgent(host, how, uncertain);
  if (fm === null) return none("finds no front matter");
  let how = `reads the front matter with ${era.parser}`;
  let r = era.parse(fm);
  if (r.ok === "uncertain") return none(how, r.reason);
  if (r.ok === false) {
    how =
      `retries the front matter with its values re-quoted (after a YAML error of ${era.parser})`;
    r = era.parse(era.requote(fm));
    if (r.ok === "uncertain") return none(how, r.reason);
    if (r.ok === false) return none("can't parse the front matter, so reads it as empty");
  }
  const value = isPlainObject(r.value) ? r.value : {};
  if (!isAgent(value, era.strictName)) return none(`${how}, and finds no name and description`);
  let grant = claudeResolvable(claudeToolsGrant(value.tools));
  const memory = value.memory;
  if (
    !grant.all && typeof memory === "string" && ["user", "project", "local"].includes(memory)
  ) {
    const names = [...grant.names];
    for (const t of MEMORY_TOOLS) if (!names.includes(t)) names.push(t);
    grant = { all: false, names };
  }
  return { host, how, agent: true, grant };
}

/**
 * Claude Code 2.1.332's reading of an agent file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeReading2_1 } from "./claude.ts";
 * // The front matter ended at the `---` in the description.
 * assert.deepEqual(claudeReading2_1("---\nname: w\ndescription: d --- x\ntools: Read\n---\n").grant, { all: true });
 * ```
 */
export function claudeReading2_1(text: string): HostReading {
  return yamlEraReading({
    host: "Claude Code 2.1.332",
    dropBom: true,
    parse: bunYamlParse,
    parser: "Bun's YAML parser",
    requote: claudeRequote,
    strictName: true,
  }, text);
}

/**
 * Claude Code 2.1.42's readings of an agent file: under Node (the npm install, the `yaml`
 * package) and under Bun (a native install).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeReadings2_1_42 } from "./claude.ts";
 * assert.deepEqual(claudeReadings2_1_42("---\nname: w\ndescription: d\ntools: Read\ntools: Edit\n---\n")
 *   .map((r) => r.agent), [false, true]); // the yaml package refuses the duplicate, Bun doesn't
 * ```
 */
export function claudeReadings2_1_42(text: string): HostReading[] {
  const base = { dropBom: false, requote: claudeRequote2_1_42, strictName: false };
  return [
    yamlEraReading({
      ...base,
      host: "Claude Code 2.1.42 (npm, Node)",
      parse: yamlPackageParse,
      parser: "the yaml package",
    }, text),
    yamlEraReading({
      ...base,
      host: "Claude Code 2.1.42 (native, Bun)",
      parse: bunYamlParse,
      parser: "Bun's YAML parser",
    }, text),
  ];
}

/**
 * Claude Code 2.0.54's reading of an agent file: its own `key: value` line reader, no YAML.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeReading2_0 } from "./claude.ts";
 * // The last `tools:` line wins, a block scalar's included.
 * assert.deepEqual(
 *   claudeReading2_0("---\nname: w\ndescription: d\ntools: Read\nx: |\n  tools: Edit\n---\n").grant,
 *   { all: false, names: ["Edit"] },
 * );
 * ```
 */
export function claudeReading2_0(text: string): HostReading {
  const host = "Claude Code 2.0.54";
  const fm = claudeFrontMatter(text, false);
  const how = "reads each `key: value` line of the front matter, the last line of a key winning";
  if (fm === null) return { host, how: "finds no front matter", agent: false, grant: null };
  const map: Record<string, string> = {};
  for (const line of fm.split("\n")) {
    const at = line.indexOf(":");
    if (at <= 0) continue;
    const key = line.slice(0, at).trim();
    const value = line.slice(at + 1).trim();
    if (key) map[key] = value.replace(/^["']|["']$/g, "");
  }
  if (!map.name || !map.description) {
    return { host, how: `${how}, and finds no name and description`, agent: false, grant: null };
  }
  return { host, how, agent: true, grant: claudeResolvable(claudeToolsGrant(map.tools)) };
}

/**
 * Every modeled Claude Code version's reading of an agent file, newest first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeReadings } from "./claude.ts";
 * assert.equal(claudeReadings("---\nname: w\ndescription: d\ntools: Read\n---\n").length, 4);
 * ```
 */
export function claudeReadings(text: string): HostReading[] {
  return [claudeReading2_1(text), ...claudeReadings2_1_42(text), claudeReading2_0(text)];
}
