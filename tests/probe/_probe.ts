/**
 * Shared bits of the adversarial probe's tests: change proposals applied through the real CLI in
 * an e2e world (tests/e2e/_run_helpers.ts), and the operator's own next `git` in a directory.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Json, type World } from "../e2e/_run_helpers.ts";
import { sha256 } from "../_helpers/mod.ts";
import type { RunResult } from "../_helpers/mod.ts";

let seq = 0;

/** A change proposal for `path` (base: the file's current hash, or `absent`). */
export function changeOf(w: World, nonce: string, path: string, content: string): Json {
  let base = "absent";
  try {
    base = sha256(Deno.readFileSync(join(w.project, path)));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return {
    kind: "change-proposal",
    dispatch: nonce,
    path,
    base_sha256: base,
    content,
    rationale: "probe",
  };
}

/** `agentteams apply FILE --project P --json` with the world's environment. */
export async function applyIn(w: World, artifact: Json): Promise<RunResult> {
  const file = join(w.scratch, `proposal-${++seq}.json`);
  await Deno.writeTextFile(file, JSON.stringify(artifact));
  return await w.cli(["apply", file, "--project", w.project, "--json"]);
}

/** The refusal code an `apply --json` printed, or `null` when it applied. */
export function applyCode(r: RunResult): string | null {
  const line = r.stdout.trim().split("\n").pop() ?? "";
  const out = JSON.parse(line) as { ok: boolean; error?: { code: string } };
  if (out.ok) {
    assert.equal(r.code, 0, r.stderr);
    return null;
  }
  return out.error?.code ?? "?";
}

/**
 * Runs the operator's own `git ARGS` in `cwd` the way an operator's shell would: their HOME,
 * a plain PATH, no GIT_* variables. Returns the exit code (the output is discarded).
 */
export async function operatorGit(w: World, cwd: string, args: string[]): Promise<number> {
  const out = await new Deno.Command("/usr/bin/git", {
    args,
    cwd,
    clearEnv: true,
    env: { HOME: w.home, PATH: "/usr/bin:/bin", LC_ALL: "C" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  return out.code;
}

/** Whether anything exists at `path` (not following a final symlink). */
export { exists as present } from "../_helpers/mod.ts";
