/**
 * The Codex checks: an agent's TOML (`.codex/agents/*.toml`) must set `sandbox_mode =
 * "read-only"` and carry no `mcp_servers`; the project's `.codex/config.toml` must carry no
 * `mcp_servers` (subagents inherit them) and is warned about a wider sandbox_mode; in either, a
 * `[debug.config_lockfile] load_path` (a config Codex replays in place of all others) is an error.
 * Parsed with smol-toml; keys are placed by a lexical scan that knows comments and multi-line
 * strings, so a decoy in either is never taken for a key.
 *
 * @module
 */
import { parse, TomlError } from "smol-toml";
import { type Spot, spot } from "./finding.ts";
import { codexSandboxDeciders } from "./hosts/codex.ts";

/** A parsed TOML file, or the finding that says why not. */
export type TomlRead =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly spot: Spot };

/**
 * Parses TOML, never throwing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readToml } from "./check_codex.ts";
 * assert.equal(readToml('sandbox_mode = "read-only"\n').ok, true);
 * ```
 */
export function readToml(text: string): TomlRead {
  try {
    return { ok: true, value: parse(text) as Record<string, unknown> };
  } catch (e) {
    if (e instanceof TomlError) {
      return {
        ok: false,
        spot: spot(
          "TOML_SYNTAX",
          e.line,
          e.column,
          `the TOML doesn't parse: ${e.message.split("\n")[0]}`,
        ),
      };
    }
    return { ok: false, spot: spot("TOML_SYNTAX", 1, 1, "the TOML doesn't parse") };
  }
}

/**
 * The line of each key assignment and table header, by dotted path (`sandbox_mode`,
 * `mcp_servers`, `mcp_servers.x`), from a lexical scan that skips comments and the inside of
 * multi-line strings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyLines } from "./check_codex.ts";
 * assert.equal(keyLines('x = """\nsandbox_mode = 1\n"""\nsandbox_mode = "read-only"\n').get("sandbox_mode"), 4);
 * ```
 */
export function keyLines(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const lines = text.split("\n");
  let table = "";
  let inMulti: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i];
    if (inMulti !== null) {
      const end = l.indexOf(inMulti);
      if (end < 0) continue;
      l = l.slice(end + 3);
      inMulti = null;
      if (/^\s*(#.*)?$/.test(l)) continue;
    }
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?/.exec(l);
    if (header !== null) {
      table = header[1].replace(/\s*\.\s*/g, ".").replace(/["']/g, "");
      if (!out.has(table)) out.set(table, i + 1);
      const top = table.split(".")[0];
      if (!out.has(top)) out.set(top, i + 1);
      continue;
    }
    const kv = /^\s*([A-Za-z0-9_."'-]+?)\s*=\s*(.*)$/.exec(l);
    if (kv !== null) {
      const key = kv[1].replace(/\s*\.\s*/g, ".").replace(/["']/g, "");
      const full = table === "" ? key : `${table}.${key}`;
      if (!out.has(full)) out.set(full, i + 1);
      const top = full.split(".")[0];
      if (!out.has(top)) out.set(top, i + 1);
      const v = kv[2];
      for (const q of ['"""', "'''"]) {
        const at = v.indexOf(q);
        if (at >= 0 && v.indexOf(q, at + 3) < 0) inMulti = q;
      }
    }
  }
  return out;
}

function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === "" || v === 0) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v as object).length > 0;
  return true;
}

/**
 * Checks a Codex agent's TOML (`read`: its parse, when the caller has it already).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkCodexAgent } from "./check_codex.ts";
 * assert.deepEqual(
 *   checkCodexAgent('name = "w"\nsandbox_mode = "workspace-write"\n', "w").map((s) => s.code),
 *   ["CODEX_SANDBOX"],
 * );
 * ```
 */
export function checkCodexAgent(
  text: string,
  slug: string,
  read: TomlRead = readToml(text),
): Spot[] {
  const who = `'${slug}'`;
  return codexSpots(
    text,
    read,
    `${who} declares mcp_servers, which sandbox_mode does not confine; remove them`,
    (mode) =>
      mode === "read-only" ? null : [
        "CODEX_SANDBOX",
        `${who}'s sandbox_mode is ${mode === undefined ? "missing" : JSON.stringify(mode)}, ` +
        `not "read-only" (a missing key inherits the parent's mode)`,
      ],
  );
}

/**
 * A Codex TOML's findings: it must parse; truthy `mcp_servers` is `CODEX_MCP` (with `mcpMessage`);
 * `sandbox` judges `sandbox_mode` (a code and message, or null when it is fine).
 */
function codexSpots(
  text: string,
  r: TomlRead,
  mcpMessage: string,
  sandbox: (mode: unknown) => readonly ["CODEX_SANDBOX" | "CODEX_CONFIG_SANDBOX", string] | null,
): Spot[] {
  if (!r.ok) return [r.spot];
  const lines = keyLines(text);
  const out: Spot[] = [];
  if (truthy(r.value.mcp_servers)) {
    out.push(spot("CODEX_MCP", lines.get("mcp_servers") ?? 1, 1, mcpMessage));
  }
  out.push(...roleFileSpots(r.value, lines));
  out.push(...lockfileSpots(r.value, lines));
  // Programs Codex runs as the user around the agents' work, whatever their sandbox
  // (`codex-rs/hooks`: a layer's `[hooks]`; `notify`, after each turn, with the turn's text).
  for (const key of ["hooks", "notify"]) {
    if (!truthy(r.value[key])) continue;
    out.push(
      spot(
        "CODEX_HOOKS",
        lines.get(key) ?? 1,
        1,
        `${key} names commands Codex runs as the user ${
          key === "hooks" ? "around every agent's tool calls" : "after every turn"
        }, outside any sandbox_mode, so no agent is proven read-only; remove it`,
      ),
    );
  }
  const bad = sandbox(r.value.sandbox_mode);
  if (bad !== null) out.push(spot(bad[0], lines.get("sandbox_mode") ?? 1, 1, bad[1]));
  // What else Codex lets the file set that decides the sandbox (lib/audit/hosts/codex.ts): the
  // widest reading counts, so each must keep it read-only too.
  const code = bad?.[0] ?? (sandbox("workspace-write")?.[0] ?? "CODEX_SANDBOX");
  for (const d of codexSandboxDeciders(r.value)) {
    if (d.readOnly) continue;
    const top = d.key.split(".")[0];
    out.push(
      spot(
        code,
        lines.get(d.key) ?? lines.get(top) ?? 1,
        1,
        `${d.key} is ${d.value}, which Codex applies over sandbox_mode and which is not ` +
          `read-only; remove it or make it "${
            d.key.endsWith("sandbox_mode") ? "read-only" : ":read-only"
          }"`,
      ),
    );
  }
  return out;
}

/**
 * The `[agents.<name>]` tables whose `config_file` names a file outside `.codex/agents/`: Codex
 * (`config/agent_roles.rs` `read_declared_role`) loads that file, resolved from the config's
 * folder, as the role's whole config layer, sandbox included, wherever it is; the audit reads only
 * `.codex/agents/**.toml` as agents, so any other role file is refused (`CODEX_SANDBOX`).
 */
function roleFileSpots(value: Record<string, unknown>, lines: Map<string, number>): Spot[] {
  const agents = value.agents;
  if (agents === null || typeof agents !== "object" || Array.isArray(agents)) return [];
  const out: Spot[] = [];
  for (const [name, role] of Object.entries(agents as Record<string, unknown>)) {
    if (role === null || typeof role !== "object" || !("config_file" in role)) continue;
    const file = (role as Record<string, unknown>).config_file;
    const parts = typeof file === "string" ? file.split(/[\\/]+/) : [];
    const inside = typeof file === "string" && !file.startsWith("/") &&
      !/^[A-Za-z]:/.test(file) && parts[0] === "agents" && parts.length > 1 &&
      !parts.some((p) => p === ".." || p === "." || p === "") &&
      /\.toml$/.test(file);
    if (inside) continue;
    out.push(
      spot(
        "CODEX_SANDBOX",
        lines.get(`agents.${name}.config_file`) ?? lines.get(`agents.${name}`) ??
          lines.get("agents") ?? 1,
        1,
        `agents.${name}.config_file names ${
          JSON.stringify(file)
        }, which Codex loads as the role's config (its sandbox included) but the audit does ` +
          "not read as an agent; move the role file into .codex/agents/ and name it there",
      ),
    );
  }
  return out;
}

/**
 * `[debug.config_lockfile] load_path`: Codex (openai/codex `codex-rs/core/src/config/mod.rs`
 * `ConfigBuilder::build_inner`) reads it from the merged config, trusted project layers included
 * (it is not on `PROJECT_LOCAL_CONFIG_DENYLIST`, `codex-rs/config/src/loader/mod.rs`), and then
 * builds the session from that file alone, as a user layer (`lock_layer_from_config`): its
 * `sandbox_mode`, `mcp_servers`, `hooks` and `notify` replace everything the audit read, and the
 * audit never reads the file. Present at all, it is `CODEX_EXTERNAL`. (`export_dir` only writes the
 * effective config out; `plugins` and `marketplaces` Codex reads from the user's own config only.)
 */
function lockfileSpots(value: Record<string, unknown>, lines: Map<string, number>): Spot[] {
  const debug = value.debug;
  if (debug === null || typeof debug !== "object" || Array.isArray(debug)) return [];
  const lock = (debug as Record<string, unknown>).config_lockfile;
  if (lock === null || typeof lock !== "object" || Array.isArray(lock) || !("load_path" in lock)) {
    return [];
  }
  const path = (lock as Record<string, unknown>).load_path;
  return [
    spot(
      "CODEX_EXTERNAL",
      lines.get("debug.config_lockfile.load_path") ?? lines.get("debug.config_lockfile") ??
        lines.get("debug") ?? 1,
      1,
      `debug.config_lockfile.load_path names ${JSON.stringify(path)}, a file Codex replays as ` +
        "the whole config (its sandbox_mode, mcp_servers and hooks in place of this one's) and " +
        "the audit does not read; remove it",
    ),
  ];
}

/**
 * Checks the project's `.codex/config.toml`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkCodexConfig } from "./check_codex.ts";
 * assert.deepEqual(checkCodexConfig("[mcp_servers.x]\ncommand = \"x\"\n").map((s) => s.code), ["CODEX_MCP"]);
 * ```
 */
export function checkCodexConfig(text: string): Spot[] {
  return codexSpots(
    text,
    readToml(text),
    "the project config declares mcp_servers, which every spawned agent inherits and " +
      "sandbox_mode doesn't confine; keep them off for a team under the switch",
    (mode) =>
      mode === undefined || mode === "read-only" ? null : [
        "CODEX_CONFIG_SANDBOX",
        `the project config sets sandbox_mode ${JSON.stringify(mode)}; the session's sandbox ` +
        "governs every agent",
      ],
  );
}

/**
 * The TOML `name` of a Codex agent, or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tomlName } from "./check_codex.ts";
 * assert.equal(tomlName('name = "orchestrator"\n'), "orchestrator");
 * ```
 */
export function tomlName(text: string): string | null {
  const r = readToml(text);
  return r.ok && typeof r.value.name === "string" ? r.value.name : null;
}
