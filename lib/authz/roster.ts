/**
 * The approver roster `references/security-approvers.txt`: one name per line, each stripped;
 * blank lines and lines starting with `#` ignored; names lower-cased; a leading `@` does not
 * count (`@Alice` is `alice`). A trailing `# comment` on a name line is part of the name, as in
 * the earlier tool. Decisions and waivers fall back to `security` when there is no roster or it
 * names no one; grants have no fallback (FORMATS.md §5.2, §6.4).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { approverName, parseRoster } from "./roster.ts";
 * assert.equal(parseRoster("# approvers\n@Alice\n\nbob\n").has(approverName("alice")), true);
 * ```
 * @module
 */
import { lstatOrNullSync } from "../fs/entry.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";

/** Who may approve when no roster names anyone (decisions and waivers only). */
export const DEFAULT_APPROVERS: readonly string[] = ["security"];

/**
 * A name as the roster compares it: stripped, leading `@`s removed, lower-cased.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { approverName } from "./roster.ts";
 * assert.equal(approverName(" @Security "), "security");
 * ```
 */
export function approverName(s: string): string {
  const t = s.trim();
  let i = 0;
  while (t.charCodeAt(i) === 0x40) i++; // the leading `@`s
  return (i === 0 ? t : t.slice(i)).toLowerCase();
}

/**
 * The names a roster's text holds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRoster } from "./roster.ts";
 * assert.deepEqual([...parseRoster("alice\n# no\n@Bob\n")], ["alice", "bob"]);
 * ```
 */
export function parseRoster(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const name = approverName(line);
    if (name !== "") out.add(name);
  }
  return out;
}

/**
 * Reads a roster file: its names, or an empty set when the file does not exist. Never through a
 * symlink.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readRoster } from "./roster.ts";
 * assert.equal(readRoster("/nonexistent/security-approvers.txt").size, 0);
 * ```
 */
export function readRoster(path: string): Set<string> {
  if (lstatOrNullSync(path) === null) return new Set();
  const bytes = readRegularFileSync(path, {
    maxBytes: 1024 * 1024,
    what: "approver roster",
    singleName: true,
  }).bytes;
  return parseRoster(new TextDecoder().decode(bytes));
}

/**
 * The roster decisions and waivers use: the file's names, or {@link DEFAULT_APPROVERS} when it
 * names no one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { projectRoster } from "./roster.ts";
 * assert.deepEqual([...projectRoster("/nonexistent/security-approvers.txt")], ["security"]);
 * ```
 */
export function projectRoster(path: string): Set<string> {
  const names = readRoster(path);
  return names.size > 0 ? names : new Set(DEFAULT_APPROVERS);
}
