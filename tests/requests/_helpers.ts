/**
 * Shared helpers for the command-request tests: simple reference path matchers, temp git
 * repositories, and a command runner for test setup.
 *
 * @module
 */

import type { PathMatchers } from "../../lib/requests/writes.ts";
import type { CommandEntry } from "../../lib/policy/types.ts";
import { GIT, gitEnv, sh } from "../_helpers/git.ts";

export { GIT, sh } from "../_helpers/git.ts";

/** A tiny fnmatch (case as given; `*` crosses `/`). */
export function refFnmatch(rel: string, glob: string): boolean {
  let re = "^";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const j = glob.indexOf("]", i + 1);
      if (j < 0) re += "\\[";
      else {
        let body = glob.slice(i + 1, j);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += `[${body.replaceAll("\\", "\\\\")}]`;
        i = j;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(re + "$", "s").test(rel);
}

/** A tiny write-scope check: exact file, or below a scope ending in `/`. */
export function refInScopes(rel: string, scopes: readonly string[]): boolean {
  return scopes.some((s) => (s.endsWith("/") ? rel.startsWith(s) : rel === s));
}

/** Reference matchers with a list of protected patterns. */
export function refMatchers(protectedPaths: readonly string[] = []): PathMatchers {
  return {
    inScopes: refInScopes,
    fnmatch: refFnmatch,
    isProtected: (rel) =>
      protectedPaths.some((p) =>
        refFnmatch(rel.toLowerCase(), p.toLowerCase()) ||
        rel.toLowerCase().startsWith(p.toLowerCase().replace(/\/$/, "") + "/")
      ),
  };
}

/** A command entry with defaults. */
export function entry(partial: Partial<CommandEntry> & Pick<CommandEntry, "prefix">): CommandEntry {
  const args = partial.args ?? [];
  return {
    prefix: partial.prefix,
    args,
    argPatterns: partial.argPatterns ?? args.map((a) => new RegExp(`^(?:${a})$`, "su")),
    variadic: partial.variadic ?? false,
    cwd: partial.cwd ?? ".",
    writes: partial.writes ?? [],
    stdinGates: partial.stdinGates ?? null,
    timeout: partial.timeout ?? 600,
    network: partial.network ?? false,
    networkAllow: partial.networkAllow ?? null,
  };
}

/** A temp git repository with one commit; returns its canonical root and a setup env. */
export async function tempRepo(
  files: Record<string, string> = { "README.md": "hello\n", "src/a.ts": "export const a = 1;\n" },
): Promise<
  { root: string; env: Record<string, string>; git: (...a: string[]) => Promise<string> }
> {
  const base = Deno.realPathSync(await Deno.makeTempDir({ prefix: "at-req-" }));
  const home = `${base}/home`;
  const root = `${base}/repo`;
  Deno.mkdirSync(home);
  Deno.mkdirSync(root);
  const env = gitEnv(home);
  const git = (...a: string[]) => sh(root, GIT, a, env);
  await git("init", "-q", "-b", "main");
  for (const [rel, text] of Object.entries(files)) {
    const abs = `${root}/${rel}`;
    Deno.mkdirSync(abs.slice(0, abs.lastIndexOf("/")), { recursive: true });
    Deno.writeTextFileSync(abs, text);
  }
  await git("add", "-A");
  await git("commit", "-q", "-m", "init");
  return { root, env, git };
}

/** Removes a temp repository (its parent temp dir). */
export function cleanup(root: string): void {
  Deno.removeSync(root.slice(0, root.lastIndexOf("/")), { recursive: true });
}
