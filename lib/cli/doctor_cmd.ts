/**
 * `agentteams doctor [--project DIR] [--brief FILE] [--json]`: what `serve` checks before it
 * serves (key custody, the sandbox, the brief, the session settings), without serving and without
 * writing anything. Exit 0 when no check is an error (warnings allowed), 1 on an error.
 *
 * @module
 */
import { type Check, preflight, preflightExit } from "../runner/preflight.ts";
import { confinedWriteProblems } from "../sandbox/roots_io.ts";
import { briefFlagPath } from "./needs.ts";
import { oneLine } from "./terminal.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `doctor`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { doctor } from "./doctor_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams doctor` in a project with keys, bwrap and full settings
 * (await doctor(ctx)).exit; // 0
 * ```
 */
export async function doctor(ctx: Ctx): Promise<Outcome> {
  const pre = await preflight({
    root: ctx.project,
    env: ctx.env,
    briefPath: briefFlagPath(ctx),
  });
  // The runner starts without them, but the first confined run would be refused: an error here.
  const confined: Check[] = pre.policy === null
    ? []
    : confinedWriteProblems(pre.policy.confinedPrograms, ctx.project).map((e) => ({
      name: "confined-write-dirs",
      ok: false,
      level: "error",
      code: e.code,
      message: e.message,
    }));
  const checks = [...pre.checks, ...confined];
  const serveRefuses = preflightExit(pre.checks) !== 0;
  const exit = preflightExit(checks);
  const lines = checks.map((c) =>
    `${c.ok ? "ok" : c.level}: ${c.name}: ${c.code !== undefined ? `${c.code}: ` : ""}` +
    oneLine(c.message)
  );
  // The lines to add, by file, in the order the checks name them.
  const byFile = new Map<string, string[]>();
  for (const c of checks) {
    if (c.add === undefined) continue;
    byFile.set(c.add.file, [...(byFile.get(c.add.file) ?? []), c.add.line]);
  }
  for (const [file, adds] of byFile) {
    lines.push(`add to ${file}, in "permissions": {"deny": [...]}:`);
    for (const a of adds) lines.push(`    ${oneLine(a)},`);
  }
  const errors = checks.filter((c) => !c.ok && c.level === "error");
  const json = {
    ok: exit === 0,
    project: ctx.project,
    checks,
    warnings: checks.filter((c) => !c.ok && c.level === "warning").length,
    errors: errors.length,
  };
  if (exit === 0) return { exit, text: lines.join("\n"), json };
  return {
    exit,
    text: lines.join("\n"),
    json,
    refusal: {
      code: errors[0].code ?? "PREFLIGHT_FAILED",
      message: `${errors.length} check(s) failed (${errors.map((c) => c.name).join(", ")}); ` +
        (serveRefuses ? "serve would refuse to start" : "confined runs would be refused") +
        ": fix them and run agentteams doctor again",
    },
  };
}
