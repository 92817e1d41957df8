/**
 * Runs one shell script inside Claude Code's real sandbox: `@anthropic-ai/sandbox-runtime`
 * (bubblewrap on Linux), configured as Claude Code configures it for a project. Run it as a child
 * process whose cwd is the project (Claude Code's cwd), with HOME the session's HOME:
 *
 * ```sh
 * deno run -A --lock=tests/deno.lock tests/probe/_srt_driver.ts 'ln a b; echo "ln=$?"'
 * ```
 *
 * The configuration is what `convertToSandboxRuntimeConfig` (Claude Code's
 * `utils/sandbox/sandbox-adapter.ts`, read in the source dump `codemyhappy/claude-code-cli`
 * b24f1e98) derives from the project's settings files: `allowWrite` is `.` and Claude's temp dir
 * (`/tmp/claude-<uid>/`); `denyWrite` is every settings file, the managed drop-in dir,
 * `.claude/skills`, the bare-repo names that exist (`HEAD`, `objects`, `refs`, `hooks`, `config`)
 * and each `Edit(...)` deny rule's path; `denyRead` is each `Read(...)` deny rule's path. Rule paths
 * starting `./` or `~/` are passed through as they are (the runtime resolves them), as Claude Code
 * does. No network is allowed.
 *
 * Exit code: the script's; 99 when the runtime could not start (its message on stderr), so the
 * caller fails loudly instead of skipping.
 *
 * @module
 */
import {
  SandboxManager,
  type SandboxRuntimeConfig,
} from "npm:@anthropic-ai/sandbox-runtime@0.0.83";
import { join, resolve } from "node:path";

/** The `permissions.deny` rules of a settings file (none when it is absent). */
function denyRules(file: string): string[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  const json = JSON.parse(text) as { permissions?: { deny?: string[] } };
  return json.permissions?.deny ?? [];
}

/**
 * The runtime configuration Claude Code derives for the project at `cwd` (see the module doc).
 *
 * @example
 * ```ts
 * const cfg = claudeSandboxConfig("/work/p", "/home/me", 1000);
 * // cfg.filesystem.denyWrite includes "./references/**" when .claude/settings.json denies Edit of it
 * ```
 */
export function claudeSandboxConfig(cwd: string, home: string, uid: number): SandboxRuntimeConfig {
  const settingsFiles = [
    join(home, ".claude", "settings.json"),
    join(cwd, ".claude", "settings.json"),
    join(cwd, ".claude", "settings.local.json"),
    "/etc/claude-code/managed-settings.json",
  ];
  const denyWrite: string[] = [
    ...settingsFiles,
    "/etc/claude-code/managed-settings.d",
    resolve(cwd, ".claude", "skills"),
  ];
  for (const name of ["HEAD", "objects", "refs", "hooks", "config"]) {
    try {
      Deno.statSync(join(cwd, name));
      denyWrite.push(join(cwd, name));
    } catch {
      // absent: Claude Code scrubs it after the command instead
    }
  }
  const denyRead: string[] = [];
  for (const file of settingsFiles) {
    for (const rule of denyRules(file)) {
      const m = /^([^(]+)\(([^)]+)\)$/.exec(rule);
      if (m === null) continue;
      if (m[1] === "Edit") denyWrite.push(m[2]);
      if (m[1] === "Read") denyRead.push(m[2]);
    }
  }
  return {
    network: { allowedDomains: [], deniedDomains: [] },
    filesystem: {
      denyRead,
      allowRead: [],
      allowWrite: [".", `/tmp/claude-${uid}/`],
      denyWrite,
    },
  };
}

if (import.meta.main) {
  const script = Deno.args[0];
  const cwd = Deno.cwd();
  const home = Deno.env.get("HOME") ?? "/";
  let wrapped: string;
  try {
    await SandboxManager.initialize(claudeSandboxConfig(cwd, home, Deno.uid() ?? 0));
    wrapped = await SandboxManager.wrapWithSandbox(script);
  } catch (e) {
    console.error(`sandbox-runtime could not start: ${e instanceof Error ? e.message : e}`);
    Deno.exit(99);
  }
  const status = await new Deno.Command("/bin/bash", { args: ["-c", wrapped], cwd }).spawn()
    .status;
  SandboxManager.cleanupAfterCommand();
  await SandboxManager.reset();
  Deno.exit(status.code);
}
