/**
 * Codex's reading of an agent role file (`.codex/agents/*.toml`), from the openai/codex sources
 * (`codex-rs/core/src/config/agent_roles.rs`: a role file is a whole config layer, `ConfigToml`
 * flattened beside `name`, `description`, `nickname_candidates`; `config/permissions.rs` and
 * `config/resolved_permission_profile.rs`: permission profiles). Besides `sandbox_mode`, what a
 * role file can set that decides the sandbox:
 *
 * - `default_permissions = "<profile>"`: a built-in profile (`:read-only`, `:workspace`,
 *   `:danger-full-access`; user profiles may not start with `:`) or a `[permissions.<profile>]`
 *   table whose `filesystem` entries grant `read`, `write` or `deny` per path;
 * - `profile = "<name>"` with `[profiles.<name>]`, whose `sandbox_mode` wins over the top-level
 *   one.
 *
 * The audit judges the widest: each of these that the file sets must be read-only too.
 *
 * @module
 */

/** One thing in a role file that decides its sandbox, and whether it is read-only. */
export interface CodexSandboxDecider {
  /** The key, as written (`default_permissions`, `profiles.w.sandbox_mode`). */
  readonly key: string;
  /** Its value, as a string for messages. */
  readonly value: string;
  /** Whether it keeps the agent read-only. */
  readonly readOnly: boolean;
}

/** The built-in read-only permission profile's name. */
export const CODEX_READ_ONLY_PROFILE = ":read-only";

function table(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === "object" && !Array.isArray(v)
    ? v as Record<string, unknown>
    : null;
}

/** Whether a value anywhere grants `write` (a permission profile's filesystem entries). */
function grantsWrite(v: unknown): boolean {
  if (typeof v === "string") return v !== "read" && v !== "deny" && v !== "none";
  if (Array.isArray(v)) return v.some(grantsWrite);
  const t = table(v);
  return t !== null && Object.values(t).some(grantsWrite);
}

/**
 * The sandbox deciders a parsed role file sets besides its top-level `sandbox_mode`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codexSandboxDeciders } from "./codex.ts";
 * assert.deepEqual(
 *   codexSandboxDeciders({ sandbox_mode: "read-only", default_permissions: ":workspace" }),
 *   [{ key: "default_permissions", value: ":workspace", readOnly: false }],
 * );
 * ```
 */
export function codexSandboxDeciders(value: Record<string, unknown>): CodexSandboxDecider[] {
  const out: CodexSandboxDecider[] = [];
  if ("default_permissions" in value) {
    const name = value.default_permissions;
    const shown = typeof name === "string" ? name : JSON.stringify(name);
    let readOnly = name === CODEX_READ_ONLY_PROFILE;
    if (typeof name === "string" && !name.startsWith(":")) {
      const profile = table(table(value.permissions)?.[name]);
      const fs = profile === null ? undefined : profile.filesystem;
      // A named profile is read-only when it names filesystem entries and none grants write,
      // and it extends nothing (or the read-only built-in).
      const ext = profile?.extends;
      readOnly = profile !== null && fs !== undefined && !grantsWrite(fs) &&
        (ext === undefined || ext === CODEX_READ_ONLY_PROFILE);
    }
    out.push({ key: "default_permissions", value: shown, readOnly });
  }
  if ("profile" in value) {
    const name = value.profile;
    const selected = typeof name === "string" ? table(table(value.profiles)?.[name]) : null;
    if (selected !== null && "sandbox_mode" in selected) {
      out.push({
        key: `profiles.${String(name)}.sandbox_mode`,
        value: JSON.stringify(selected.sandbox_mode),
        readOnly: selected.sandbox_mode === "read-only",
      });
    }
    if (selected !== null && "default_permissions" in selected) {
      for (const d of codexSandboxDeciders({ ...value, ...selected, profile: undefined })) {
        if (d.key === "default_permissions") {
          out.push({ ...d, key: `profiles.${String(name)}.default_permissions` });
        }
      }
    }
  }
  return out;
}
