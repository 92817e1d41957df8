/**
 * `agentteams brief check [--brief B]`: the brief's shape check and lint, every problem at once,
 * before any agent depends on it. Exit 0 when it passes (its warnings printed), 1 on any problem.
 *
 * @module
 */
import { resolve } from "../fs/path.ts";
import { checkBrief } from "../policy/brief.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import { confinedWriteProblems } from "../sandbox/write_exec_roots_io.ts";
import { briefFlagPath } from "./needs.ts";
import { oneLine } from "./terminal.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `brief check`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { briefCheck } from "./brief_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams brief check` in a project with a good brief
 * (await briefCheck(ctx)).exit; // 0
 * ```
 */
export async function briefCheck(ctx: Ctx): Promise<Outcome> {
  const path = briefFlagPath(ctx) ?? await defaultBriefPath(ctx.project);
  const r = await checkBrief(resolve(path), { projectRoot: ctx.project });
  // A brief the check accepts: its confined write directories as the first confined run checks them.
  const confined = r.policy === null
    ? []
    : confinedWriteProblems(r.policy.confinedPrograms, ctx.project);
  const problems = [...r.findings, ...confined].map((e) => ({ code: e.code, message: e.message }));
  const lines = [
    ...problems.map((p) => `${p.code}: ${oneLine(p.message)}`),
    ...r.warnings.map((w) => `warning: ${oneLine(w)}`),
  ];
  const json = {
    ok: problems.length === 0,
    brief: r.briefPath,
    agents: r.agents,
    gates: r.gates,
    problems,
    warnings: r.warnings,
  };
  if (problems.length > 0) {
    return {
      exit: 1,
      text: lines.join("\n"),
      json,
      refusal: {
        code: problems[0].code,
        message: `${problems.length} problem(s) in ${r.briefPath}; fix them and check again`,
      },
    };
  }
  lines.unshift(
    `ok: ${r.briefPath} passes (${r.agents.length} agent(s): ${r.agents.join(", ") || "none"}; ` +
      `${r.gates.length} gate(s))`,
  );
  return { exit: 0, text: lines.join("\n"), json };
}
