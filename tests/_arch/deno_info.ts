/**
 * `deno info --json` as an oracle for tests/_arch/imports.ts: the specifiers Deno's own module
 * graph reads from a file (static, type-only and literal dynamic imports, each specifier once).
 *
 * @module
 */

interface DenoInfo {
  roots: string[];
  modules: { specifier: string; dependencies?: { specifier: string }[] }[];
}

/**
 * The specifiers `deno info --json` reads from each of `files` (paths relative to `root`), sorted
 * and each once. No config, lock file, npm or remote resolution: only what is written is wanted.
 */
export async function denoInfoSpecifiers(
  root: string,
  files: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const file of files) {
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--no-config", "--no-lock", "--no-npm", "--no-remote", file],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    if (r.code !== 0) throw new Error(`deno info ${file}: ${dec.decode(r.stderr)}`);
    const graph: DenoInfo = JSON.parse(dec.decode(r.stdout));
    const mod = graph.modules.find((m) => m.specifier === graph.roots[0]);
    if (mod === undefined) throw new Error(`deno info ${file}: the root is not among its modules`);
    out.set(file, [...new Set((mod.dependencies ?? []).map((d) => d.specifier))].sort());
  }
  return out;
}
