/**
 * A CSV ledger's rows as records by column name, and the action-id matching every instrument
 * shares.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { recordsOf } from "./table.ts";
 * assert.equal(
 *   recordsOf({ header: ["a"], rows: [{ line: 2, cells: ["1"] }], crlf: false, bom: false })[0].a,
 *   "1",
 * );
 * ```
 * @module
 */
import type { CsvTable } from "./csv.ts";
import type { Problem } from "./verdict.ts";

/**
 * The columns every approved, counted instrument (a waiver, a grant) has, in this order, between
 * its own leading columns and its own signed tail.
 */
export const INSTRUMENT_COLUMNS = [
  "expires_at",
  "max_uses",
  "uses",
  "approver",
  "ticket_id",
  "reason_code",
] as const;

/** The columns this tool adds after `signature` for Ed25519 rows (waivers and grants). */
export const SCHEME_COLUMNS = ["sig_scheme", "key_id"] as const;

/**
 * The rows of a table as records.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { recordsOf } from "./table.ts";
 * assert.equal(recordsOf({ header: ["x"], rows: [], crlf: false, bom: false }).length, 0);
 * ```
 */
export function recordsOf(t: CsvTable): Record<string, string>[] {
  const out = new Array<Record<string, string>>(t.rows.length);
  const header = t.header;
  // Every record a copy of one template holding the header's columns in order, then filled: the
  // copy has the template's shape, so each store overwrites a property instead of adding one
  // (adding them one by one cost ~4x as much at 10,000 rows), and the readers see one shape.
  const template: Record<string, string> = {};
  for (let i = 0; i < header.length; i++) template[header[i]] = "";
  for (let j = 0; j < t.rows.length; j++) {
    const cells = t.rows[j].cells;
    const o = { ...template };
    for (let i = 0; i < header.length; i++) o[header[i]] = cells[i];
    out[j] = o;
  }
  return out;
}

/**
 * One row's cells as a record by column name (what {@link recordsOf} makes of each row; a verify
 * of many rows makes each in turn, so it need not hold them all).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { recordOf } from "./table.ts";
 * assert.equal(recordOf(["a", "b"], ["1", "2"]).b, "2");
 * ```
 */
export function recordOf(
  header: readonly string[],
  cells: readonly string[],
): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i < header.length; i++) o[header[i]] = cells[i];
  return o;
}

/**
 * A record's cells in a header's order (columns it lacks are empty).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cellsOf } from "./table.ts";
 * assert.deepEqual(cellsOf({ a: "1" }, ["a", "b"]), ["1", ""]);
 * ```
 */
export function cellsOf(rec: Record<string, string>, header: readonly string[]): string[] {
  return header.map((h) => rec[h] ?? "");
}

/**
 * A field of a record, `""` when absent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { field } from "./table.ts";
 * assert.equal(field({ a: "1" }, "b"), "");
 * ```
 */
export function field(rec: Record<string, string>, name: string): string {
  // Only strings count: a name an object inherits (`constructor`) reads as absent.
  const v = rec[name];
  return typeof v === "string" ? v : "";
}

/**
 * Whether an authorizing row (a PASS, a waiver) names exactly the action (case-insensitive,
 * stripped): an authorization never reaches further than the action it names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authorizes } from "./table.ts";
 * assert.equal(authorizes("delete:src/a.ts", "DELETE:src/a.ts"), true);
 * assert.equal(authorizes("delete:src/a.ts", "delete:src/a"), false);
 * ```
 */
export function authorizes(rowAction: string, action: string): boolean {
  return actionKey(rowAction) === actionKey(action);
}

/**
 * An action as {@link authorizes} compares it: stripped, lower case (what the ledgers' index hashes
 * to find the rows naming an action).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { actionKey } from "./table.ts";
 * assert.equal(actionKey(" DELETE:src/a.ts "), "delete:src/a.ts");
 * ```
 */
export function actionKey(action: string): string {
  return action.trim().toLowerCase();
}

const SEPARATORS = ["-", "_", ".", ":"];

/**
 * An action id as a HALT compares it: trimmed, lower case, and when it names a path
 * (`<verb>:<path>`, e.g. `write:./docs/shared/` or `delete:src//a.ts`) the path normalized: no
 * `.` segments, no doubled or trailing `/`. A HALT is not to be dodged by spelling.
 */
function haltKey(action: string): { id: string; verb: string | null; path: string[] | null } {
  const id = action.trim().toLowerCase();
  const m = /^([a-z][a-z0-9_-]*):(.+)$/.exec(id);
  if (m === null || !m[2].includes("/") && !m[2].startsWith(".")) {
    return { id, verb: m?.[1] ?? null, path: m === null ? null : [m[2]] };
  }
  const abs = m[2].startsWith("/");
  const segs = m[2].split("/").filter((s) => s !== "" && s !== ".");
  return {
    id: `${m[1]}:${abs ? "/" : ""}${segs.join("/")}`,
    verb: m[1],
    path: abs ? ["/", ...segs] : segs,
  };
}

/**
 * Whether a HALT row reaches the action: the same id, or either extends the other by a separator
 * (`-`, `_`, `.`, `:`), case-insensitive; for a path action (`write:docs/shared`), the path
 * normalized and either path an ancestor of the other (a HALT on `write:docs` stops a grant on
 * `write:docs/shared`, and `write:./docs/shared/` is `write:docs/shared`). Wider than
 * {@link authorizes} on purpose: a HALT on `delete` stops `delete:src/a.ts`, and a HALT on
 * `delete:src/a.ts` stops a gate asked about `delete` (the earlier tool's rule, made symmetric).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { haltReaches } from "./table.ts";
 * assert.equal(haltReaches("delete", "delete:src/a.ts"), true);
 * assert.equal(haltReaches("deploy", "delete:src/a.ts"), false);
 * assert.equal(haltReaches("write:./docs/", "write:docs/shared"), true);
 * assert.equal(haltReaches("write:docs/a", "write:docs/b"), false);
 * ```
 */
export function haltReaches(rowAction: string, action: string): boolean {
  return haltReacher(action)(rowAction);
}

/**
 * {@link haltReaches} for one action and many rows: the action's key is worked out once (a HALT
 * scan asks it of every HALT row of the log).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { haltReacher } from "./table.ts";
 * const reaches = haltReacher("delete:src/a.ts");
 * assert.deepEqual(["delete", "deploy", "DELETE:./src"].map(reaches), [true, false, true]);
 * ```
 */
export function haltReacher(action: string): (rowAction: string) => boolean {
  const kb = haltKey(action);
  const b = kb.id;
  // A HALT and its retraction name one action: each spelling is worked out once.
  const seen = new Map<string, boolean>();
  return (rowAction) => {
    let r = seen.get(rowAction);
    if (r === undefined) seen.set(rowAction, r = reaches(rowAction));
    return r;
  };
  function reaches(rowAction: string): boolean {
    const ka = haltKey(rowAction);
    const a = ka.id;
    if (a === "" || b === "") return false;
    if (a === b) return true;
    if (extendsBy(a, b) || extendsBy(b, a)) return true;
    if (ka.verb === null || ka.verb !== kb.verb || ka.path === null || kb.path === null) {
      return false;
    }
    const [short, long] = ka.path.length <= kb.path.length
      ? [ka.path, kb.path]
      : [kb.path, ka.path];
    return short.every((seg, i) => long[i] === seg);
  }
}

/** Whether `long` is `short` followed by a separator and more. */
function extendsBy(long: string, short: string): boolean {
  return long.startsWith(short) && SEPARATORS.includes(long[short.length]);
}

/**
 * An integer counter as the earlier tool read it (`int(v or 0)`), or `null` when it is not one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { counter } from "./table.ts";
 * assert.equal(counter(""), 0);
 * assert.equal(counter(" 3 "), 3);
 * assert.equal(counter("2.5"), null);
 * ```
 */
export function counter(v: string): number | null {
  // Most counters are one digit: read it without the trim and the pattern.
  if (v.length === 1) {
    const d = v.charCodeAt(0) - 0x30;
    if (d >= 0 && d <= 9) return d;
  }
  const s = v.trim();
  if (s === "") return 0;
  if (!/^[+-]?\d{1,15}$/.test(s)) return null;
  return Number(s);
}

/**
 * The use counters' rule: `max_uses` and `uses` integers (empty is 0), and `uses < max_uses`
 * (`max_uses <= 0` allows nothing); `null` when a use is left.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { usesProblem } from "./table.ts";
 * assert.equal(usesProblem({ max_uses: "2", uses: "2" }, "waiver")?.code, "USES_EXHAUSTED");
 * assert.equal(usesProblem({ max_uses: "2", uses: "1" }, "waiver"), null);
 * ```
 */
export function usesProblem(rec: Record<string, string>, what: string): Problem | null {
  const max = counter(field(rec, "max_uses"));
  const uses = counter(field(rec, "uses"));
  if (max === null || uses === null) {
    return { code: "COUNTER_INVALID", reason: "max_uses and uses must be integers" };
  }
  if (max <= 0 || uses >= max) {
    return {
      code: "USES_EXHAUSTED",
      reason: `${what} use limit has been reached (${uses} of ${max})`,
    };
  }
  return null;
}
