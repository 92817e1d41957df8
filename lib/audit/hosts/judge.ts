/**
 * The audit's judgement of the host models' readings: a file whose readings (the audit's strict
 * one and each host version's) differ in what they grant beyond read-only is `FM_AMBIGUOUS`,
 * naming both readings, and every tool the widest reading grants is checked as if declared.
 *
 * @module
 */
import { type Spot, spot } from "../finding.ts";
import { classifyTool, type ToolClass } from "../tools.ts";
import { beyondReadOnly, describeGrant, type Grant, type HostReading } from "./grant.ts";

/** The audit's strict reading of the file: its grant, or null when the strict reader refused. */
export interface StrictReading {
  /** What the strict reading grants, or null when it could not read `tools:` at all. */
  readonly grant: Grant | null;
  /** The line of `tools:` (or 1). */
  readonly line: number;
  /** The column of `tools:` (or 1). */
  readonly column: number;
}

/**
 * The spots of the host readings against the strict one: one `FM_AMBIGUOUS` naming every host
 * reading that grants beyond read-only something the strict reading doesn't (or that the model
 * cannot predict), and a `TOOL_WRITE`/`TOOL_SHELL_WARN`/`TOOL_DISPATCH`/`TOOL_UNKNOWN` for each
 * tool some reading grants beyond the strict one. `shellCode` is the code a shell gets on this
 * host, `classify` how it classes a tool name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { judgeReadings } from "./judge.ts";
 * const r = judgeReadings("'w'", { grant: { all: false, names: ["Read"] }, line: 4, column: 1 }, [
 *   { host: "H 1", how: "reads it", agent: true, grant: { all: false, names: ["Read", "Edit"] } },
 * ], "TOOL_SHELL_WARN");
 * assert.deepEqual(r.map((s) => s.code), ["FM_AMBIGUOUS", "TOOL_WRITE"]);
 * ```
 */
export function judgeReadings(
  who: string,
  strict: StrictReading,
  readings: readonly HostReading[],
  shellCode: "TOOL_SHELL" | "TOOL_SHELL_WARN",
  classify: (name: string) => ToolClass = classifyTool,
): Spot[] {
  const out: Spot[] = [];
  const { line, column } = strict;
  const strictBeyond = strict.grant === null ? null : beyondReadOnly(strict.grant, classify);
  const strictWords = strict.grant === null
    ? "the audit's strict reading can't read its `tools:`"
    : `the audit's strict reading grants ${describeGrant(strict.grant)}`;
  const extra = new Map<string, string>();
  // Each host reading wider than the strict one, its words grouped by what it grants.
  const wider = new Map<string, string[]>();
  for (const r of readings) {
    if (r.uncertain !== undefined) {
      const key = `can't be told (${r.uncertain})`;
      wider.set(key, [...(wider.get(key) ?? []), r.host]);
      continue;
    }
    if (!r.agent || r.grant === null) continue;
    const beyond = beyondReadOnly(r.grant, classify);
    // Wider than the strict reading: a tool beyond read-only that it doesn't grant (a narrower
    // host reading grants less, which the strict checks already judge).
    const differs = strictBeyond === null
      ? beyond.length > 0
      : !strictBeyond.includes("*") && beyond.some((n) => !strictBeyond.includes(n));
    if (!differs) continue;
    const key = `${r.how} and grants ${describeGrant(r.grant)}`;
    wider.set(key, [...(wider.get(key) ?? []), r.host]);
    for (const name of beyond) {
      if (strictBeyond !== null && strictBeyond.includes(name)) continue;
      if (!extra.has(name)) extra.set(name, r.host);
    }
  }
  if (wider.size > 0) {
    const words = [...wider].map(([what, hosts]) => `${hosts.join(" and ")}: ${what}`);
    out.push(
      spot(
        "FM_AMBIGUOUS",
        line,
        column,
        `${who}: the hosts read it differently from the audit's strict reading (${
          words.join("; ")
        }), but ${strictWords}; the audit judges the widest reading, so it is not proven ` +
          "read-only. Write the front matter so every reading agrees",
      ),
    );
  }
  const by: Record<string, string[]> = {};
  for (const [name, host] of extra) {
    if (name === "*") continue; // every tool: the FM_AMBIGUOUS above says so
    const c = classify(name);
    (by[c] ??= []).push(`${name} (as ${host} reads it)`);
  }
  const list = (xs: string[]) => xs.join(", ");
  if (by.write !== undefined) {
    out.push(spot("TOOL_WRITE", line, column, `${who} grants write tool(s) ${list(by.write)}`));
  }
  if (by.dispatch !== undefined) {
    out.push(
      spot(
        "TOOL_DISPATCH",
        line,
        column,
        `${who} grants dispatch (${list(by.dispatch)}), which can start a subagent that writes`,
      ),
    );
  }
  if (by.unknown !== undefined) {
    out.push(
      spot(
        "TOOL_UNKNOWN",
        line,
        column,
        `${who} grants tool(s) this check can't classify as read-only: ${list(by.unknown)}`,
      ),
    );
  }
  if (by.shell !== undefined) {
    out.push(
      spot(
        shellCode,
        line,
        column,
        `${who} grants a shell (${list(by.shell)}); agents hold no shell under the switch`,
      ),
    );
  }
  return out;
}
