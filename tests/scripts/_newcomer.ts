/**
 * A newcomer's shell, for the first-contact tests of the set-up scripts: this machine's own
 * environment (its npm settings and certificates) less Deno's and the tool's variables, with no
 * directory on PATH that holds a `deno`.
 *
 * @module
 */
import { join } from "node:path";

/** PATH without any directory holding a `deno`. */
export function pathWithoutDeno(): string {
  return (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":").filter((d) => {
    try {
      Deno.statSync(join(d, "deno"));
      return false;
    } catch {
      return true;
    }
  }).join(":");
}

/** The newcomer's environment: no `DENO_*`, no `AGENTTEAMS*`, and PATH without a deno. */
export function newcomerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (!k.startsWith("DENO_") && !k.startsWith("AGENTTEAMS")) env[k] = v;
  }
  env.PATH = pathWithoutDeno();
  return env;
}
