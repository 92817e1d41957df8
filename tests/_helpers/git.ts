/**
 * Test-setup processes: the real git (tests that need it fail loudly without it), an environment
 * with no global or system git config and a fixed identity, and a runner that throws with the
 * program's stderr when setup fails.
 *
 * @module
 */

const dec = new TextDecoder();

/** Absolute git for test setup. */
export const GIT: string = (() => {
  for (const p of ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"]) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch {
      // try the next
    }
  }
  throw new Error("git is required by these tests and was not found: install it");
})();

/** Environment for setup git calls: no global or system config, a fixed identity. */
export function gitEnv(home: string): Record<string, string> {
  return {
    PATH: "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.com",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.com",
    LC_ALL: "C",
  };
}

/** Runs a setup program with exactly `env`, throwing with its stderr on failure; returns stdout. */
export async function sh(
  cwd: string,
  program: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<string> {
  const out = await new Deno.Command(program, {
    args: [...args],
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(
      `${program} ${args.join(" ")} failed (${out.code}): ${dec.decode(out.stderr)}`,
    );
  }
  return dec.decode(out.stdout);
}

/**
 * A committed git project at `root` for whole-program tests: `src/a.txt` (`old\n`) and a brief
 * (`agentteams.json`) that lets `worker` write `src/` and run `true` (confined, executing under
 * `/usr/bin` and `/bin`), and allows unconfined runs.
 * Git runs with {@link gitEnv} of `home`.
 *
 * @example
 * ```ts ignore
 * import { workerProject } from "./git.ts";
 * await workerProject("/tmp/w/p", "/tmp/w/home");
 * ```
 */
export async function workerProject(root: string, home: string): Promise<void> {
  Deno.mkdirSync(`${root}/src`, { recursive: true });
  Deno.writeTextFileSync(`${root}/src/a.txt`, "old\n");
  Deno.writeTextFileSync(
    `${root}/agentteams.json`,
    JSON.stringify({
      allow_unconfined_runs: true,
      agent_policies: { worker: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] } },
      // A confined run may execute what lies under these (and write `src/`).
      confined_programs: { worker: { exec: ["/usr/bin", "/bin"], write: ["src"] } },
    }),
  );
  const env = gitEnv(home);
  await sh(root, GIT, ["init", "-q", "."], env);
  await sh(root, GIT, ["add", "-A"], env);
  await sh(root, GIT, ["commit", "-qm", "init"], env);
}
