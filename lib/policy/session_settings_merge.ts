/**
 * Adding deny rules to a Claude Code settings file without losing what the user wrote: every
 * key, every rule, in their order; the new rules go at the end of `permissions.deny`. Which rules
 * to add is never decided here: they are the `SETTINGS_RULE_MISSING` findings of the one check
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
  // The strict reader: comments, trailing commas and duplicate keys are refused.
  const value: unknown = text === null ? {} : readJson(text, { dialect: "json" }).value;
  if (!isRecord(value)) throw new TypeError("the settings are not a JSON object");
  const perms = value.permissions ?? {};
  if (!isRecord(perms)) throw new TypeError('"permissions" is not an object');
  const deny = perms.deny ?? [];
  if (!Array.isArray(deny) || deny.some((d) => typeof d !== "string")) {
    throw new TypeError('"permissions.deny" is not an array of strings');
  }
  const added = rules.filter((r, i) => !deny.includes(r) && rules.indexOf(r) === i);
  if (text !== null && added.length === 0) return text;
  const merged = { ...value, permissions: { ...perms, deny: [...deny, ...added] } };
  return JSON.stringify(merged, null, 2) + "\n";
}
