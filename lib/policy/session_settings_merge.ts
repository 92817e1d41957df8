/**
 * Adding deny rules (and the `sandbox` values) to a Claude Code settings file without losing what
 * the user wrote: every key, every rule, in their order; the new rules go at the end of
 * `permissions.deny`. Which rules and values to add is never decided here: they are the
 * `SETTINGS_RULE_MISSING` and `SETTINGS_SANDBOX` findings of the one check
 * (`sessionSettingsFindings`), so a rule `doctor` starts to require is one `init` adds. Only a
 * strict JSON object is merged; the caller refuses a file the check could not read (comments,
 * trailing commas, another shape), and this module throws rather than guess.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeDenyRules } from "./session_settings_merge.ts";
 * assert.equal(
 *   mergeDenyRules('{"permissions": {"deny": ["Read(./.env)"]}}', ["Edit(./.agentteams/**)"]),
 *   '{\n  "permissions": {\n    "deny": [\n      "Read(./.env)",\n      "Edit(./.agentteams/**)"\n    ]\n  }\n}\n',
 * );
 * ```
 * @module
 */
import { readJson } from "../json/reader.ts";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The settings text with `rules` appended to `permissions.deny` (those already there, exactly,
 * are not added twice), two-space indented; `text` null: a new file holding just them. The
 * result is the same text when nothing is added. Throws when `text` is not a strict JSON object
 * whose `permissions` is an object and whose `permissions.deny` is an array of strings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeDenyRules } from "./session_settings_merge.ts";
 * assert.equal(
 *   mergeDenyRules(null, ["Read(./.agentteams/**)"]),
 *   '{\n  "permissions": {\n    "deny": [\n      "Read(./.agentteams/**)"\n    ]\n  }\n}\n',
 * );
 * ```
 */
export function mergeDenyRules(text: string | null, rules: readonly string[]): string {
  return mergeSessionSettings(text, { deny: rules });
}

/**
 * The settings text with `deny` appended to `permissions.deny` (as {@link mergeDenyRules}) and
 * each of `sandbox`'s keys set to its value in the `"sandbox"` object (every other key of it
 * kept, in order; a key already holding the value left as is). The result is the same text when
 * nothing changes. Throws as {@link mergeDenyRules} does, and when `sandbox` is not an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeSessionSettings } from "./session_settings_merge.ts";
 * assert.equal(
 *   mergeSessionSettings('{"sandbox": {"enabled": false}}', { sandbox: { enabled: true } }),
 *   '{\n  "sandbox": {\n    "enabled": true\n  }\n}\n',
 * );
 * ```
 */
export function mergeSessionSettings(
  text: string | null,
  change: {
    readonly deny?: readonly string[];
    readonly sandbox?: Readonly<Record<string, boolean>>;
  },
): string {
  // The strict reader: comments, trailing commas and duplicate keys are refused.
  const value: unknown = text === null ? {} : readJson(text, { dialect: "json" }).value;
  if (!isRecord(value)) throw new TypeError("the settings are not a JSON object");
  const perms = value.permissions ?? {};
  if (!isRecord(perms)) throw new TypeError('"permissions" is not an object');
  const deny = perms.deny ?? [];
  if (!Array.isArray(deny) || deny.some((d) => typeof d !== "string")) {
    throw new TypeError('"permissions.deny" is not an array of strings');
  }
  const sandbox = value.sandbox ?? {};
  if (!isRecord(sandbox)) throw new TypeError('"sandbox" is not an object');
  const rules = change.deny ?? [];
  const added = rules.filter((r, i) => !deny.includes(r) && rules.indexOf(r) === i);
  const set = Object.entries(change.sandbox ?? {}).filter(([k, v]) => sandbox[k] !== v);
  if (text !== null && added.length === 0 && set.length === 0) return text;
  const merged: Record<string, unknown> = { ...value };
  if (added.length > 0 || (text === null && change.deny !== undefined)) {
    merged.permissions = { ...perms, deny: [...deny, ...added] };
  }
  if (set.length > 0) merged.sandbox = { ...sandbox, ...Object.fromEntries(set) };
  return JSON.stringify(merged, null, 2) + "\n";
}
