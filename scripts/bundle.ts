/**
 * The release bundle: `deno bundle --code-splitting` of `main.ts`, then every dynamic import the
 * bundler wrote between its chunks is made opaque to Deno's module-graph builder.
 *
 * Why: before running a module, `deno run` builds its graph, and that graph follows dynamic imports
 * whose specifier is a string literal, reading and parsing their targets even when they are never
 * imported. The bundle's command table imports each command's chunk that way, so every command
 * would read every chunk at start-up (the `schema` chunk alone is ~750 KB of zod). A specifier the
 * graph builder cannot read (`String("./x.js")`) is resolved the same way when the import runs:
 * relative to the chunk that imports it.
 *
 * And the bundler's `require` shim is taken out of the shared runtime chunk: for the CommonJS build
 * of `yaml` it writes `import { createRequire } from "node:module"` at the top of the chunk every
 * other chunk imports its helpers from, so every command, `--version` included, would load Deno's
 * Node compatibility layer (~45 ms here). Each `__require("node:X")` is replaced by a static import
 * of `node:X` in the chunk that calls it (a built-in's `require` and its default export are the same
 * object), and the shim by one that throws: only the chunks that use a built-in load it.
 *
 * Usage: deno run --allow-all scripts/bundle.ts OUTDIR (what `deno task bundle` runs)
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { resolve } from "../lib/fs/path.ts";
import { releaseFlags } from "../lib/permissions.ts";
import { shellQuote } from "../lib/cli/shell_quote.ts";

/** A dynamic import of a sibling chunk, as the bundler writes it. */
const CHUNK_IMPORT = /\bimport\("(\.\/[A-Za-z0-9_.-]+\.js)"\)/g;
/**
 * Any dynamic import of a file by a literal specifier (built-ins such as `node:crypto` cost the
 * graph builder nothing and stay).
 */
const LITERAL_IMPORT = /\bimport\(\s*["'`](?:\.{1,2}\/|\/|file:)/;

/** The bundler's `require` shim, as it writes it at the top of the shared runtime chunk. */
const REQUIRE_SHIM =
  /^import \{ createRequire as (__deno_internal_createRequire\d*) \} from "node:module";\nvar (__require\d*) = \1\(import\.meta\.url\);$/m;
/** A `require` of a built-in by the shim (the name as imported from the runtime chunk). */
const BUILTIN_REQUIRE = /\b(__require\d*)\("node:([a-z_]+(?:\/[a-z_]+)*)"\)/g;
/** Anything else left calling a shim: a `require` this post-pass cannot resolve statically. */
const ANY_REQUIRE = /\b__require\d*\(/;

/**
 * Takes the `require` shim out of the bundle: in the chunk that defines it (`runtime`) it becomes a
 * function that throws, with no `node:module` import; in each chunk, every `__require("node:X")`
 * becomes a static default import of `node:X` at the top of that chunk. Returns the rewritten
 * chunks; throws when a `require` is left that is not of a built-in by a literal name.
 *
 * @example
 * ```ts
 * import { unshimRequires } from "./bundle.ts";
 * const out = unshimRequires(new Map([
 *   ["rt.js", 'import { createRequire as __deno_internal_createRequire } from "node:module";\n' +
 *     "var __require = __deno_internal_createRequire(import.meta.url);\nexport { __require };\n"],
 *   ["a.js", 'import { __require } from "./rt.js";\nvar p = __require("node:process");\n'],
 * ]));
 * out.get("a.js")?.startsWith('import __node_process from "node:process";'); // true
 * out.get("rt.js")?.includes("node:module"); // false
 * ```
 */
export function unshimRequires(chunks: ReadonlyMap<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, js] of chunks) {
    let text = js.replace(
      REQUIRE_SHIM,
      (_m, _create: string, shim: string) =>
        `var ${shim} = (id) => {\n  throw new Error(\`agentteams bundle: require(\${id}) was not ` +
        "resolved when the bundle was built\`);\n};",
    );
    const builtins = new Set<string>();
    text = text.replace(BUILTIN_REQUIRE, (_m, _shim: string, mod: string) => {
      builtins.add(mod);
      return `__node_${mod.replaceAll("/", "_")}`;
    });
    // (`function __require2()` is the bundler's CommonJS wrapper, a definition, not a call.)
    const left = ANY_REQUIRE.exec(text.replace(/\bfunction __require\d*\(/g, ""));
    if (left !== null) {
      const line = text.slice(left.index).split("\n")[0];
      throw new Error(`${name}: a require the bundle cannot resolve is left: ${line}`);
    }
    if (builtins.size > 0) {
      const imports = [...builtins].sort().map((m) =>
        `import __node_${m.replaceAll("/", "_")} from "node:${m}";\n`
      ).join("");
      text = imports + text;
    }
    out.set(name, text);
  }
  return out;
}

/**
 * Rewrites `import("./chunk.js")` to `import(String("./chunk.js"))`: the same module at run time,
 * invisible to the graph builder before it.
 *
 * @example
 * ```ts
 * import { opaqueChunkImports } from "./bundle.ts";
 * opaqueChunkImports('f = () => import("./run-AB12.js");');
 * // 'f = () => import(String("./run-AB12.js"));'
 * ```
 */
export function opaqueChunkImports(js: string): string {
  return js.replace(CHUNK_IMPORT, (_m, spec: string) => `import(String(${JSON.stringify(spec)}))`);
}

/**
 * Bundles `main.ts` of `root` into `outdir` (created; a previous bundle there is replaced) and makes
 * its chunk imports opaque. Throws with the bundler's message when it fails.
 *
 * @example
 * ```ts
 * import { bundleTo } from "./bundle.ts";
 * await bundleTo("/work/main", "/work/main/dist/agentteams");
 * ```
 */
export async function bundleTo(root: string, outdir: string): Promise<string[]> {
  try {
    Deno.removeSync(outdir, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--code-splitting", "--outdir", outdir, "main.ts"],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`deno bundle failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  const files = [...Deno.readDirSync(outdir)].map((e) => e.name).filter((n) => n.endsWith(".js"))
    .sort();
  const unshimmed = unshimRequires(
    new Map(files.map((name) => [name, Deno.readTextFileSync(`${outdir}/${name}`)])),
  );
  for (const name of files) {
    const path = `${outdir}/${name}`;
    const js = Deno.readTextFileSync(path);
    const rewritten = opaqueChunkImports(unshimmed.get(name) ?? js);
    // Fail closed: a literal file import in another shape would silently slow every start.
    const left = LITERAL_IMPORT.exec(rewritten);
    if (left !== null) throw new Error(`${name}: a literal dynamic import is left: ${left[0]}`);
    if (rewritten !== js) Deno.writeTextFileSync(path, rewritten);
  }
  return files;
}

/**
 * The command line that runs a bundle as the release forms do: this Deno by its absolute path (a
 * machine where `scripts/install-deno` put Deno has none on PATH), `--no-config`, the union of the
 * commands' permission flags (without them the first command stops on `NOT_CAPABLE`), and the
 * bundle's `main.js` by its absolute path, quoted for a POSIX shell.
 *
 * @example
 * ```ts
 * import { bundleRunLine } from "./bundle.ts";
 * const line = bundleRunLine("/usr/bin/deno", "/srv/dist/agentteams");
 * if (!line.startsWith("/usr/bin/deno run --no-config --allow-read")) throw new Error(line);
 * if (!line.endsWith(" /srv/dist/agentteams/main.js")) throw new Error(line);
 * ```
 */
export function bundleRunLine(deno: string, absOutdir: string): string {
  return [deno, "run", "--no-config", ...releaseFlags(), `${absOutdir}/main.js`].map(shellQuote)
    .join(" ");
}

if (import.meta.main) {
  const outdir = Deno.args[0];
  if (outdir === undefined) {
    console.error("usage: deno run --allow-all scripts/bundle.ts OUTDIR");
    Deno.exit(2);
  }
  const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
  const abs = resolve(outdir);
  await bundleTo(root, abs);
  console.log(`bundled ${abs}; run it with:\n  ${bundleRunLine(Deno.execPath(), abs)} --help`);
}
