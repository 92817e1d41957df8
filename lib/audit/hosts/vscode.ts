/**
 * VS Code's own reading of a custom agent file (`.github/agents/*.agent.md`, a `.md` directly in
 * `.github/agents/`, and the legacy `.github/chatmodes/*.chatmode.md`), taken from the VS Code
 * 1.130.0 sources (`src/vs/workbench/contrib/chat/common/promptSyntax/promptFileParser.ts`
 * `PromptFileParser` and `PromptHeader.tools`, `service/promptsServiceImpl.ts` (the agent built
 * from a parsed file), `src/vs/base/common/yaml.ts` (VS Code's own YAML parser), and
 * `browser/widget/input/chatSelectedTools.ts` (what an agent's tools mean)). The corpus
 * (tests/testdata/hosts/vscode/) was read by running that `PromptFileParser` itself.
 *
 * 1. the header starts when the first line is `/^---[\s\r\n]*$/` (no BOM dropped by the parser:
 *    `\uFEFF---` is no header) and ends at the next such line; **with no closing line the header
 *    runs to the end of the file** (it is still read);
 * 2. its YAML is VS Code's own parser, which never refuses a file: errors are reported and the
 *    parsed part is used, **the first of duplicate keys wins** (`attributes.find`), anchors, tags
 *    and merge keys are plain text;
 * 3. every file is an agent: no header, no `name` and no `description` are all accepted;
 * 4. `tools` absent, a mapping, or no header at all: **every tool** (the agent has no custom
 *    tools, so the user's global tool selection applies); a scalar is split at commas (each part
 *    trimmed, quotes stripped), so `tools:` alone is no tools and `tools: ~` is the tool `~`; a
 *    list keeps its non-empty scalar items (nested lists and maps are dropped).
 *
 * The model reads the header's structure with the `yaml` package and calls a header it can't
 * vouch for (a YAML error, tabs, anchors, tags, block scalars, merge keys, document markers)
 * _uncertain_: the audit then treats the file as not proven read-only.
 *
 * @module
 */
import { isMap, isScalar, isSeq, parseDocument, type Scalar } from "yaml";
import { unmodeledCharacter } from "./bun_yaml.ts";
import { ALL, type HostReading } from "./grant.ts";

/** The VS Code version the model was taken from. */
export const VSCODE_HOST = "VS Code 1.130.0";

const FENCE = /^---[\s\r\n]*$/;
/**
 * What VS Code's YAML may read differently from the `yaml` package, or the model doesn't cover:
 * tabs, a YAML indicator (anchor, alias, tag, block scalar, directive, reserved) starting a value,
 * an item or a key, merge keys and document markers.
 */
const UNMODELED =
  /\t|(?:^[ ]*|:[ ]+|^[ ]*-[ ]+|[[{][ ]*|[[{][^\]}\n]*,[ ]*)[&*!|>%@`?]|<<|^\.\.\.|^---/m;

/**
 * VS Code's reading of a custom agent file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { vscodeReading } from "./vscode.ts";
 * assert.deepEqual(vscodeReading("---\ndescription: d\ntools: {read: true}\n---\n").grant, { all: true });
 * assert.deepEqual(vscodeReading("---\ntools: read, search\n---\n").grant, { all: false, names: ["read", "search"] });
 * ```
 */
export function vscodeReading(text: string): HostReading {
  const host = VSCODE_HOST;
  const lines = text.split(/(?<=\n)/);
  if (!FENCE.test(lines[0] ?? "")) {
    return { host, how: "finds no header, so gives the agent", agent: true, grant: ALL };
  }
  let close = lines.findIndex((l, i) => i > 0 && FENCE.test(l));
  const how = close < 0
    ? "reads the header to the end of the file (no closing `---` line)"
    : "reads the header with its own YAML parser";
  if (close < 0) close = lines.length;
  const header = lines.slice(1, close).join("").replace(/\r\n/g, "\n");
  const odd = unmodeledCharacter(header) ??
    (UNMODELED.test(header)
      ? "it uses YAML whose reading by VS Code's parser is not modeled"
      : null);
  if (odd !== null) return { host, how, agent: true, grant: null, uncertain: odd };
  const doc = parseDocument(header, { version: "1.2", uniqueKeys: false, merge: false });
  if (doc.errors.length > 0) {
    return {
      host,
      how,
      agent: true,
      grant: null,
      uncertain: "its YAML has an error, and VS Code reads the part it can parse",
    };
  }
  const root = doc.contents;
  if (root === null || root === undefined || (isScalar(root) && root.value === null)) {
    return { host, how: `${how}, which is empty, so gives the agent`, agent: true, grant: ALL };
  }
  if (!isMap(root)) {
    return {
      host,
      how: `${how}, which is no mapping, so gives the agent`,
      agent: true,
      grant: ALL,
    };
  }
  // The first `tools` key wins (PromptHeader.tools: attributes.find).
  const pair = root.items.find((p) => isScalar(p.key) && scalarText(p.key) === "tools");
  if (pair === undefined) return { host, how, agent: true, grant: ALL };
  const v = pair.value;
  if (v === null || (isScalar(v) && v.value === null && scalarText(v) === "")) {
    return { host, how, agent: true, grant: { all: false, names: [] } };
  }
  if (isScalar(v)) {
    return { host, how, agent: true, grant: { all: false, names: splitToolList(scalarText(v)) } };
  }
  if (isSeq(v)) {
    const names: string[] = [];
    for (const item of v.items) {
      if (!isScalar(item)) continue;
      const t = scalarText(item);
      if (t !== "") names.push(t);
    }
    return { host, how, agent: true, grant: { all: false, names } };
  }
  return {
    host,
    how: `${how}; its \`tools:\` is a mapping, which it ignores`,
    agent: true,
    grant: ALL,
  };
}

/** A scalar as VS Code's parser keeps it: the source text of a plain scalar, a quoted one's value. */
function scalarText(s: Scalar): string {
  if (s.type === "PLAIN" && typeof s.source === "string") return s.source;
  return s.value === null || s.value === undefined ? "" : String(s.value);
}

/**
 * VS Code's `parseCommaSeparatedList` (promptFileParser.ts): parts at commas, each trimmed, a
 * part that starts with a quote read to the matching quote; empty parts dropped by the caller.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitToolList } from "./vscode.ts";
 * assert.deepEqual(splitToolList("read, 'edit', ,search"), ["read", "edit", "search"]);
 * ```
 */
export function splitToolList(input: string): string[] {
  const out: string[] = [];
  let pos = 0;
  const ws = (c: string | undefined) => c === " " || c === "\t";
  while (pos < input.length) {
    while (pos < input.length && ws(input[pos])) pos++;
    if (pos >= input.length) break;
    let value = "";
    const c = input[pos];
    if (c === '"' || c === "'") {
      pos++;
      while (pos < input.length && input[pos] !== c) value += input[pos++];
      if (pos < input.length) pos++;
    } else {
      while (pos < input.length && input[pos] !== ",") value += input[pos++];
      value = value.trimEnd();
    }
    if (value !== "") out.push(value);
    while (pos < input.length && ws(input[pos])) pos++;
    if (pos < input.length && input[pos] === ",") pos++;
  }
  return out;
}
