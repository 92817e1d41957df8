/**
 * The Goose recipe checks: what its extensions and its `# agentteams-declared-tools:` marker
 * grant, `summon`, `sub_recipes`, `retry`, analyze, the read-only `agentteams_readfs` (launched
 * as `lib/mcp/readfs_launch.ts` accepts),
 * and template syntax outside the prompt text (goose renders the recipe before reading it).
 *
 * @module
 */
import { type Spot, spot } from "./finding.ts";
import { type GooseParameter, gooseRenderRisk } from "./hosts/goose.ts";
import { readYaml, type YMap, type YNode } from "./yaml_tree.ts";
import { READFS_TOOLS as READFS_TOOL_NAMES, readfsLaunchProblem } from "../mcp/readfs_launch.ts";

/** The tools agentteams_readfs has (the server's own list). */
const READFS_TOOLS: ReadonlySet<string> = new Set(READFS_TOOL_NAMES);

const READFS_KEYS = new Set(["type", "name", "cmd", "args", "timeout", "available_tools"]);
const BUILTIN_KEYS = new Set([
  "type",
  "name",
  "display_name",
  "description",
  "timeout",
  "bundled",
  "available_tools",
]);

/** The developer extension's tools by what they grant. */
const DEVELOPER_WRITE = new Set(["write", "edit", "text_editor"]);
const DEVELOPER_SHELL = new Set(["shell"]);
const DEVELOPER_READ = new Set(["tree", "list_windows", "screen_capture", "image_processor"]);

/**
 * The keys whose text goose passes to the model (template syntax there is prompt text):
 * `instructions`, `prompt`, and each of `activities` (example prompts, parameters substituted).
 */
const PROMPT_KEYS = new Set(["instructions", "prompt", "activities"]);

/**
 * Checks a Goose recipe (YAML; the Desktop form nested under `recipe:` too).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkGoose } from "./check_goose.ts";
 * assert.deepEqual(checkGoose("title: t\ninstructions: hi\n", "w").map((s) => s.code), [
 *   "GOOSE_EXTENSIONS_MISSING",
 * ]);
 * ```
 */
export function checkGoose(text: string, slug: string, json = false): Spot[] {
  const who = `'${slug}'`;
  const read = readYaml(text, 1, { json });
  const out: Spot[] = [...read.spots];
  if (read.root === null || read.root.kind !== "map") templateSpots(text, null, who, out);
  if (read.root === null) {
    if (!read.spots.some((s) => s.code === "YAML_SYNTAX")) {
      out.push(spot("YAML_NOT_MAPPING", 1, 1, `${who} is an empty recipe`));
    }
    return out;
  }
  if (read.root.kind !== "map") {
    out.push(spot("YAML_NOT_MAPPING", read.root.line, read.root.column, `${who} is not a mapping`));
    return out;
  }
  let recipe: YMap = read.root;
  const nested = recipe.pairs.find((p) => p.key === "recipe");
  if (nested !== undefined && nested.value?.kind === "map") {
    templateSpots(text, nested.value, who, out);
    recipe = nested.value;
  } else {
    templateSpots(text, recipe, who, out);
  }
  markerSpots(text, who, out);
  for (const p of recipe.pairs) {
    if (p.key === "sub_recipes") {
      out.push(
        spot(
          "GOOSE_SUB_RECIPES",
          p.keyPlace.line,
          p.keyPlace.column,
          `${who} declares sub_recipes`,
        ),
      );
    }
    if (p.key === "retry") {
      out.push(
        spot(
          "GOOSE_RETRY",
          p.keyPlace.line,
          p.keyPlace.column,
          `${who} declares a retry block, whose checks goose runs as shell commands`,
        ),
      );
    }
  }
  const ext = recipe.pairs.find((p) => p.key === "extensions");
  if (
    ext === undefined || ext.value === null ||
    (ext.value.kind === "scalar" && ext.value.value === null)
  ) {
    const at = ext?.keyPlace ?? recipe;
    out.push(
      spot(
        "GOOSE_EXTENSIONS_MISSING",
        at.line,
        at.column,
        `${who} declares no extensions, so goose loads the user's enabled ones, writes included`,
      ),
    );
    return out;
  }
  if (ext.value.kind !== "seq") {
    out.push(
      spot(
        "GOOSE_EXTENSION",
        ext.keyPlace.line,
        ext.keyPlace.column,
        `${who}'s extensions is not a list`,
      ),
    );
    return out;
  }
  let developer = false;
  let analyze = false;
  for (const item of ext.value.items) {
    if (item === null) continue;
    if (item.kind !== "map") {
      out.push(
        spot(
          "GOOSE_EXTENSION",
          item.line,
          item.column,
          `${who} lists an extension that is not a mapping`,
        ),
      );
      continue;
    }
    const name = str(item, "name");
    const type = str(item, "type");
    const at = item;
    if (name === "developer") {
      if (type !== "builtin" && type !== "platform") {
        out.push(wrongType(at, who, name, type, "builtin"));
        continue;
      }
      developer = true;
      extraKeys(item, BUILTIN_KEYS, who, name, out);
      developerSpots(item, who, out);
    } else if (name === "analyze" || name === "summon") {
      if (name === "analyze") analyze = true;
      if (type !== "platform") {
        out.push(wrongType(at, who, name, type, "platform"));
        continue;
      }
      extraKeys(item, BUILTIN_KEYS, who, name, out);
      if (!listedOff(item)) {
        out.push(
          spot(
            name === "analyze" ? "GOOSE_ANALYZE_ON" : "GOOSE_SUMMON",
            at.line,
            at.column,
            name === "analyze"
              ? `${who} leaves analyze on (it reads outside the workspace); list it \`available_tools: [__none__]\``
              : `${who} enables summon, which starts subagents that may write`,
          ),
        );
      }
    } else if (name === "agentteams_readfs") {
      readfsSpots(item, who, out);
    } else {
      out.push(
        spot(
          "GOOSE_EXTENSION",
          at.line,
          at.column,
          `${who} carries the extension ${
            JSON.stringify(name ?? "(unnamed)")
          }, which the audit can't ` +
            "judge; under the switch only agentteams_readfs is allowed",
        ),
      );
    }
  }
  if (developer && !analyze) {
    out.push(
      spot(
        "GOOSE_ANALYZE_ON",
        ext.keyPlace.line,
        ext.keyPlace.column,
        `${who} lists developer without analyze, and goose adds analyze beside developer; ` +
          "list analyze with `available_tools: [__none__]`",
      ),
    );
  }
  return out;
}

function str(map: YMap, key: string): string | null {
  const p = map.pairs.find((x) => x.key === key);
  if (p === undefined || p.value === null || p.value.kind !== "scalar" || p.value.value === null) {
    return null;
  }
  return String(p.value.value);
}

function wrongType(at: YNode, who: string, name: string, type: string | null, want: string): Spot {
  return spot(
    "GOOSE_BUILTIN_TYPE",
    at.line,
    at.column,
    `${who} gives the built-in ${name} the type ${JSON.stringify(type)}; it must be ${want}`,
  );
}

function extraKeys(
  item: YMap,
  allowed: ReadonlySet<string>,
  who: string,
  name: string,
  out: Spot[],
): void {
  for (const p of item.pairs) {
    if (!allowed.has(p.key)) {
      out.push(
        spot(
          name === "agentteams_readfs" ? "GOOSE_READFS" : "GOOSE_EXTENSION_KEY",
          p.keyPlace.line,
          p.keyPlace.column,
          `${who} gives ${name} the key \`${p.key}\`, which can change what it runs; remove it`,
        ),
      );
    }
  }
}

/** `available_tools` as a list of names, `null` when absent, `"bad"` when not a list of words. */
function availableTools(item: YMap): string[] | null | "bad" {
  const p = item.pairs.find((x) => x.key === "available_tools");
  if (p === undefined || p.value === null) return null;
  if (p.value.kind === "scalar" && p.value.value === null) return null;
  if (p.value.kind !== "seq") return "bad";
  const names: string[] = [];
  for (const it of p.value.items) {
    if (it === null || it.kind !== "scalar" || it.value === null) return "bad";
    names.push(String(it.value));
  }
  return names;
}

function listedOff(item: YMap): boolean {
  const t = availableTools(item);
  return Array.isArray(t) && t.length === 1 && t[0] === "__none__";
}

function developerSpots(item: YMap, who: string, out: Spot[]): void {
  const tools = availableTools(item);
  const all = tools === null || tools === "bad" || tools.length === 0;
  const names = all ? [...DEVELOPER_WRITE, ...DEVELOPER_SHELL] : tools;
  const writes = names.filter((t) => DEVELOPER_WRITE.has(t));
  const shells = names.filter((t) => DEVELOPER_SHELL.has(t));
  const unknown = all
    ? []
    : names.filter((t) =>
      !DEVELOPER_WRITE.has(t) && !DEVELOPER_SHELL.has(t) && !DEVELOPER_READ.has(t) &&
      t !== "__none__"
    );
  const why = all
    ? tools !== null && tools !== "bad"
      ? " (`available_tools: []` means every tool)"
      : " (no `available_tools` list means every tool)"
    : "";
  if (writes.length > 0) {
    out.push(
      spot(
        "GOOSE_WRITE",
        item.line,
        item.column,
        `${who}'s developer exposes ${writes.join(", ")}${why}`,
      ),
    );
  }
  if (unknown.length > 0) {
    out.push(
      spot(
        "GOOSE_EXTENSION",
        item.line,
        item.column,
        `${who}'s developer lists tool(s) the audit doesn't know: ${unknown.join(", ")}`,
      ),
    );
  }
  if (shells.length > 0) {
    out.push(
      spot("GOOSE_SHELL", item.line, item.column, `${who}'s developer grants a shell${why}`),
    );
  }
}

function readfsSpots(item: YMap, who: string, out: Spot[]): void {
  extraKeys(item, READFS_KEYS, who, "agentteams_readfs", out);
  const type = str(item, "type");
  const cmd = str(item, "cmd");
  const argsPair = item.pairs.find((p) => p.key === "args");
  const args = argsPair?.value?.kind === "seq"
    ? argsPair.value.items.map((i) => (i?.kind === "scalar" ? String(i.value) : "\u0000"))
    : null;
  const problem = type !== "stdio" ? "its type is not stdio" : readfsLaunchProblem(cmd, args);
  if (problem !== null) {
    out.push(
      spot(
        "GOOSE_READFS",
        item.line,
        item.column,
        `${who}'s agentteams_readfs does not launch the readfs server: ${problem}`,
      ),
    );
  }
  const tools = availableTools(item);
  if (!Array.isArray(tools) || tools.length === 0 || tools.some((t) => !READFS_TOOLS.has(t))) {
    out.push(
      spot(
        "GOOSE_READFS",
        item.line,
        item.column,
        `${who}'s agentteams_readfs must list its read tools (${[...READFS_TOOLS].join(", ")}) ` +
          "in available_tools, and no others",
      ),
    );
  }
}

/** `# agentteams-declared-tools: a, b` markers (a comment goose ignores; the generator's note). */
function markerSpots(text: string, who: string, out: Spot[]): void {
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^[ \t]*#[ \t]*agentteams-declared-tools:(.*)$/.exec(lines[i]);
    if (m === null) continue;
    const toks = m[1].split(",").map((t) => t.trim().toLowerCase()).filter((t) => t !== "");
    const w = toks.filter((t) => t === "edit" || t === "write" || t === "create");
    if (w.length > 0) {
      out.push(spot("GOOSE_WRITE", i + 1, 1, `${who}'s marker declares ${w.join(", ")}`));
    }
    if (toks.includes("agent")) {
      out.push(spot("GOOSE_SUMMON", i + 1, 1, `${who}'s marker declares agent (summon)`));
    }
    if (toks.includes("execute")) {
      out.push(spot("GOOSE_SHELL", i + 1, 1, `${who}'s marker declares execute (a shell)`));
    }
  }
}

/**
 * `{{`, `{%` or `{#` anywhere in the raw text but inside the instructions and prompt values
 * (comments included: goose renders the text before YAML sees it).
 */
function templateSpots(text: string, recipe: YMap | null, who: string, out: Spot[]): void {
  if (!/\{[{%#]/.test(text)) return;
  const allowed: [number, number][] = [];
  for (const p of recipe?.pairs ?? []) {
    if (!PROMPT_KEYS.has(p.key) || p.value === null) continue;
    const texts: (YNode | null)[] = p.value.kind === "seq" ? [...p.value.items] : [p.value];
    for (const t of texts) if (t !== null && t.kind === "scalar") allowed.push([t.start, t.end]);
  }
  const re = /\{[{%#]/g;
  let m: RegExpExecArray | null;
  let lineStart = 0;
  let line = 1;
  let scanned = 0;
  while ((m = re.exec(text)) !== null) {
    const off = m.index;
    if (allowed.some(([a, b]) => off >= a && off < b)) continue;
    for (; scanned < off; scanned++) {
      if (text.charCodeAt(scanned) === 10) {
        line++;
        lineStart = scanned + 1;
      }
    }
    out.push(
      spot(
        "GOOSE_TEMPLATE",
        line,
        off - lineStart + 1,
        `${who} has template syntax ${JSON.stringify(m[0])} outside instructions and prompt; ` +
          "goose renders it before reading the recipe",
      ),
    );
    return; // one is enough: the rest of the file may render differently anyway
  }
  // Inside the prompt text too, goose renders the whole file before reading it
  // (lib/audit/hosts/goose.ts): what can change its lines is not proven read-only.
  const risk = gooseRenderRisk(text, parameterDefaults(recipe));
  if (risk !== null) {
    const off = text.search(/\{[{%#]/);
    const before = text.slice(0, off);
    const at = before.lastIndexOf("\n");
    out.push(
      spot(
        "GOOSE_TEMPLATE",
        (before.match(/\n/g)?.length ?? 0) + 1,
        off - at,
        `${who} has template syntax in its prompt text that goose may render into other keys: ` +
          `${risk}; use plain \`{{ name }}\` parameters without a default that holds line breaks ` +
          "or quotes",
      ),
    );
  }
}

/** Each parameter's written `default` and whether it is a file, by its `key`. */
function parameterDefaults(recipe: YMap | null): Map<string, GooseParameter> {
  const out = new Map<string, GooseParameter>();
  const params = recipe?.pairs.find((p) => p.key === "parameters")?.value;
  if (params === null || params === undefined || params.kind !== "seq") return out;
  for (const item of params.items) {
    if (item === null || item.kind !== "map") continue;
    const key = str(item, "key");
    const def = str(item, "default");
    if (key === null) continue;
    out.set(key, {
      ...(def === null ? {} : { default: def }),
      file: str(item, "input_type") === "file",
    });
  }
  return out;
}
