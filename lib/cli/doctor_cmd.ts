/**
 * `agentteams doctor [--project DIR] [--brief FILE] [--json]`: what `serve` checks before it
 * serves (key custody, the sandbox, the brief, the session settings), without serving and without
 * writing anything. Exit 0 when no check is an error (warnings allowed), 1 on an error.
 *
 * @module
 */
import { type Check, preflight, preflightExit } from "../runner/preflight.ts";
import { confinedWriteProblems } from "../sandbox/write_exec_roots_io.ts";
import { landlockGap, type SandboxHost, sandboxHost } from "../sandbox/mod.ts";
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
  const checks = [
    ...pre.checks,
    ...confined,
    ...(Deno.build.os === "linux"
      ? [execAllowlistCheck(sandboxHost(), pre.policy?.requireExecAllowlist === true)]
      : []),
  ];
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

/**
 * The Landlock line (Linux), from what the host offers: whether every exec of a confined command
 * is held to the declared programs. Without Landlock only the top-level program is checked: a
 * warning, or an error when the brief sets `require_exec_allowlist` (every confined run is then
 * refused).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { execAllowlistCheck } from "./doctor_cmd.ts";
 * const host = { bwrap: { disableUserns: true, bindFd: true }, landlock: { abi: 0, reason: "none" } };
 * assert.equal(execAllowlistCheck(host, true).level, "error");
 * ```
 */
export function execAllowlistCheck(host: SandboxHost, required: boolean): Check {
  const gap = landlockGap(host);
  const level = required ? "error" : "warning";
  if (gap === null) {
    return {
      name: "exec-allowlist",
      ok: true,
      level,
      message: `Landlock ABI ${host.landlock.abi}: every exec in a confined run is held to the ` +
        "declared exec paths",
    };
  }
  return {
    name: "exec-allowlist",
    ok: false,
    level,
    ...(required ? { code: "SANDBOX_UNAVAILABLE" } : {}),
    message: `no Landlock here (${gap}): only each command's top-level program is checked ` +
      "against its exec paths" +
      (required
        ? "; the brief sets require_exec_allowlist, so every confined run is refused"
        : "; set require_exec_allowlist in the brief to refuse such runs"),
  };
}
