/**
 * `agentteams init [--dry-run] [--force] [--project DIR] [--brief FILE] [--json]`: switches the
 * project on (`lib/init/init.ts`): the brief, the session settings' deny rules, the `.gitignore`
 * lines, the reference file, then what `audit --fix` would change. Each change is printed before
 * it is made (with `--dry-run`, instead); a second run changes nothing.
 *
 * @module
 */
import { fixCommandOf, type InitChange, initProject } from "../init/init.ts";
import { join } from "../fs/path.ts";
import { briefFlagPath } from "./needs.ts";
import { oneLine, stderrProgress } from "./terminal.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/** Whether the working directory is the project root (else the command names absolute paths). */
function cwdIsRoot(root: string): boolean {
  try {
    return Deno.realPathSync(Deno.cwd()) === root;
  } catch {
    return false; // not readable under the launch flags: absolute paths always work
  }
}

/** How a change reads, as it is made (or would be). */
function changeLine(c: InitChange, dryRun: boolean): string {
  const verb = c.action === "keep" ? "keep" : dryRun ? `would ${c.action}` : c.action;
  return `${verb} ${oneLine(c.file)}: ${oneLine(c.what)}`;
}

/**
 * Runs `init`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { init } from "./init_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams init --dry-run` in a project with agent files
 * (await init(ctx)).exit; // 0, every change shown and none made
 * ```
 */
export async function init(ctx: Ctx): Promise<Outcome> {
  const dryRun = ctx.parsed.flags["dry-run"] === true;
  const force = ctx.parsed.flags.force === true;
  const enc = new TextEncoder();
  const progress = stderrProgress("init", "files", ctx);
  let r;
  try {
    r = await initProject({
      root: ctx.project,
      env: ctx.env,
      dryRun,
      force,
      briefPath: briefFlagPath(ctx),
      onProgress: (n) => progress.tick(n),
      show: (c) => {
        progress.done();
        // Printed as it happens, before the write: the person sees each change first.
        if (!ctx.json) Deno.stdout.writeSync(enc.encode(changeLine(c, dryRun) + "\n"));
      },
    });
  } finally {
    progress.done();
  }
  const lines: string[] = [];
  if (r.changes.length === 0) lines.push("nothing to change: the project is switched on");
  for (const n of r.notes) lines.push(`note: ${oneLine(n)}`);
  const fixable = r.fixes.filter((f) =>
    f.outcome === "would-fix" || f.outcome === "skipped-adopted"
  );
  if (r.fixes.length === 0) lines.push("audit --fix --dry-run: nothing to change");
  else {
    lines.push("audit --fix --dry-run:");
    for (const f of r.fixes) {
      const what = f.changes.length > 0 ? f.changes.join("; ") : (f.reason ?? "");
      const tag = f.outcome === "refused" ? "cannot fix" : "would fix";
      lines.push(`  ${tag} ${oneLine(f.file)}: ${oneLine(what)}`);
    }
  }
  // The files as the person's shell names them: relative to the project when run from it.
  const here = cwdIsRoot(r.root);
  const fixCommand = fixCommandOf(r.fixFiles.map((f) => here ? f : join(r.root, f)));
  if (fixCommand !== null && fixable.length > 0) lines.push(`next: ${oneLine(fixCommand)}`);
  const audited = `the audit finds ${r.auditErrors} error(s) before --fix`;
  if (r.switchState === "on") {
    lines.push(
      `${dryRun ? "would switch on" : "switched on"} ${oneLine(r.root)}: ${r.agents.length} ` +
        `agent(s) in the brief; ${audited}; then run agentteams doctor`,
    );
  } else {
    // A brief init kept decides the switch, and this one does not turn it on.
    const brief = oneLine(r.brief);
    lines.push(
      `${oneLine(r.root)} is not switched on: the brief init kept, ${brief}, ` +
        (r.switchState === "off"
          ? `does not say "write_policy": "orchestrator-only"; add it to ${brief}`
          : "cannot be read (agentteams brief check says why), so every command treats the " +
            `project as under the switch until it is fixed; fix ${brief}`) +
        `, or run agentteams init --force to back it up and write the template; ${audited}`,
    );
  }
  return {
    exit: 0,
    text: lines.join("\n"),
    json: {
      ok: true,
      dry_run: dryRun,
      project: r.root,
      brief: r.brief,
      switch: r.switchState,
      changes: r.changes.map((c) => ({ ...c })),
      agents: [...r.agents],
      notes: [...r.notes],
      fixes: r.fixes.map((f) => ({ ...f, changes: [...f.changes] })),
      fix_command: fixCommand,
      audit_errors: r.auditErrors,
    },
  };
}
