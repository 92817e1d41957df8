/**
 * `deno info --json` as an oracle for tests/_arch/imports.ts: the specifiers Deno's own module
 * graph reads from a file (static, type-only and literal dynamic imports, each specifier once).
 *
 * @module
 */

interface DenoInfo {
  modules: { specifier: string; dependencies?: { specifier: string }[] }[];
}

/**
 * The specifiers `deno info --json` reads from each of `files` (paths relative to `root`), sorted
 * and each once. No config, lock file, npm or remote resolution: only what is written is wanted.
 * One `deno info` reads a file and everything it reaches, so a file another already reached
 * costs no process of its own.
 */
export async function denoInfoSpecifiers(
  root: string,
  files: readonly string[],
): Promise<Map<string, string[]>> {
  const base = new URL(`file://${root.endsWith("/") ? root : root + "/"}`);
  const bySpecifier = new Map<string, string[]>();
  const out = new Map<string, string[]>();
  const dec = new TextDecoder();
  for (const file of files) {
    const url = new URL(file, base).href;
    if (!bySpecifier.has(url)) {
      const r = await new Deno.Command(Deno.execPath(), {
        args: ["info", "--json", "--no-config", "--no-lock", "--no-npm", "--no-remote", file],
        cwd: root,
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (r.code !== 0) throw new Error(`deno info ${file}: ${dec.decode(r.stderr)}`);
      const graph: DenoInfo = JSON.parse(dec.decode(r.stdout));
      for (const m of graph.modules) {
        if (m.dependencies === undefined && bySpecifier.has(m.specifier)) continue;
        bySpecifier.set(
          m.specifier,
          [...new Set((m.dependencies ?? []).map((d) => d.specifier))].sort(),
        );
      }
    }
    const specifiers = bySpecifier.get(url);
    if (specifiers === undefined) throw new Error(`deno info ${file}: not among its modules`);
    out.set(file, specifiers);
  }
  return out;
}
