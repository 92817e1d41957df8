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
 * And it is minified: a start's cost beyond Deno's own is loading the chunks and compiling what
 * it calls. The refusal classes spell their names out (`lib/errors.ts`), since the minifier
 * renames classes. (Deno's code cache keeps only what V8 compiled when the module was, so a
 * function first called later is compiled again on every start. V8's `//# allFunctionsCalledOnLoad`
 * would compile every function up front, but Deno 2.9.6 does not ask V8 to follow it: V8's
 * function-event log shows each such function compiled lazily, marked or not, so no chunk is
 * marked. `--no-lazy` does fill the cache, and was measured: about 5 ms less for `run`, 1 ms
 * more for `--version`, and, as a flag, it would have to be every command's, since a cache made
 * under other V8 flags is thrown away and made again.)
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

/**
 * The bundler's `require` shim where the runtime chunk defines it, spelled plainly or minified:
 * its `createRequire` import and the variable it binds (group 2).
 */
const REQUIRE_SHIM =
  /import ?\{ ?createRequire as (__deno_internal_createRequire\d*) ?\} ?from ?"node:module";\n?var ([\w$]+) ?= ?\1\(import\.meta\.url\);/;
/** The bundler's unminified name for the shim, which it keeps in every chunk. */
const PLAIN_SHIM = /^__require\d*$/;
/** Anything calling an unminified shim: a `require` this post-pass cannot resolve statically. */
const ANY_REQUIRE = /\b__require\d*\(/;

/** The `local`/`exported` pairs of an `import {…}` or `export {…}` clause's inside. */
function bindings(clause: string): { name: string; as: string }[] {
  return clause.split(",").map((b) => b.trim()).filter((b) => b !== "").map((b) => {
    const [name, as = name] = b.split(/\s+as\s+/);
    return { name, as };
  });
}

function escapeRegExp(s: string): string {
  return s.replace(/[$.*+?^()[\]{}|\\]/g, "\\$&");
}

/** What {@link unshimRequires} returns: the rewritten chunks and the built-ins it resolved. */
export interface Unshimmed {
  /** Every chunk, rewritten where it used the shim. */
  readonly chunks: Map<string, string>;
  /** How many `require`s of each built-in were made static imports, over all chunks. */
  readonly requires: Map<string, number>;
}

/**
 * Takes the `require` shim out of the bundle: in the chunk that defines it (`runtime`) it becomes a
 * function that throws, with no `node:module` import; in each chunk, every call of the shim with
 * a built-in's name (`__require("node:X")`, or under whatever name a minified chunk imports the
 * shim by) becomes a static default import of `node:X` at the top of that chunk. Throws when a
 * `require` is left that is not of a built-in by a literal name. Minified names can be reused in
 * inner scopes, so there only calls with a literal argument are refused: `bundleTo` runs the
 * unminified bundle through first, where every call is seen.
 *
 * @example
 * ```ts
 * import { unshimRequires } from "./bundle.ts";
 * const { chunks, requires } = unshimRequires(new Map([
 *   ["rt.js", 'import { createRequire as __deno_internal_createRequire } from "node:module";\n' +
 *     "var __require = __deno_internal_createRequire(import.meta.url);\nexport { __require };\n"],
 *   ["a.js", 'import { __require } from "./rt.js";\nvar p = __require("node:process");\n'],
 * ]));
 * if (!chunks.get("a.js")?.startsWith('import __node_process from "node:process";')) throw 0;
 * if (chunks.get("rt.js")?.includes("node:module")) throw 0;
 * if (requires.get("process") !== 1) throw 0;
 * ```
 */
export function unshimRequires(chunks: ReadonlyMap<string, string>): Unshimmed {
  const out = new Map<string, string>();
  const requires = new Map<string, number>();
  // The chunk defining the shim, its local name there and the names it is exported under.
  let runtime: { chunk: string; local: string; exported: Set<string> } | null = null;
  for (const [name, js] of chunks) {
    const m = REQUIRE_SHIM.exec(js);
    if (m === null) continue;
    const exported = new Set<string>();
    for (const clause of js.matchAll(/\bexport ?\{([^}]*)\}/g)) {
      for (const b of bindings(clause[1])) if (b.name === m[2]) exported.add(b.as);
    }
    runtime = { chunk: name, local: m[2], exported };
  }
  for (const [name, js] of chunks) {
    // The names this chunk calls the shim by.
    const locals = new Set<string>();
    let text = js;
    if (runtime !== null && name === runtime.chunk) {
      locals.add(runtime.local);
      text = text.replace(
        REQUIRE_SHIM,
        (_m, _create: string, shim: string) =>
          `var ${shim} = (id) => {\n  throw new Error(\`agentteams bundle: require(\${id}) was not ` +
          "resolved when the bundle was built\`);\n};",
      );
    } else if (runtime !== null) {
      const from = new RegExp(
        `\\bimport ?\\{([^}]*)\\} ?from ?"\\./${escapeRegExp(runtime.chunk)}"`,
        "g",
      );
      for (const clause of js.matchAll(from)) {
        for (const b of bindings(clause[1])) if (runtime.exported.has(b.name)) locals.add(b.as);
      }
    }
    const builtins = new Set<string>();
    for (const local of locals) {
      const shim = escapeRegExp(local);
      text = text.replace(
        new RegExp(`(?<![\\w$.])${shim}\\("node:([a-z_]+(?:/[a-z_]+)*)"\\)`, "g"),
        (_m, mod: string) => {
          builtins.add(mod);
          requires.set(mod, (requires.get(mod) ?? 0) + 1);
          return `__node_${mod.replaceAll("/", "_")}`;
        },
      );
      // A minified name may be another binding in an inner scope: only a call with a literal
      // argument is surely the shim's.
      const left = PLAIN_SHIM.test(local)
        ? null
        : new RegExp(`(?<![\\w$.])${shim}\\(\\s*["'\`]`).exec(text);
      if (left !== null) {
        const line = text.slice(left.index, left.index + 80).split("\n")[0];
        throw new Error(`${name}: a require the bundle cannot resolve is left: ${line}`);
      }
    }
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
  return { chunks: out, requires };
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

async function denoBundle(root: string, outdir: string, minify: boolean): Promise<string[]> {
  try {
    Deno.removeSync(outdir, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--code-splitting",
      ...(minify ? ["--minify"] : []),
      "--outdir",
      outdir,
      "main.ts",
    ],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`deno bundle failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return [...Deno.readDirSync(outdir)].map((e) => e.name).filter((n) => n.endsWith(".js")).sort();
}

/** Reads the chunks, takes the shim out (throws on a require left); returns them, not written. */
function postPass(outdir: string, files: readonly string[]): Unshimmed {
  return unshimRequires(
    new Map(files.map((name) => [name, Deno.readTextFileSync(`${outdir}/${name}`)])),
  );
}

function sameRequires(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  const flat = (m: ReadonlyMap<string, number>) => JSON.stringify([...m].sort());
  return flat(a) === flat(b);
}

/**
 * Bundles `main.ts` of `root` into `outdir` (created; a previous bundle there is replaced),
 * minified, and rewrites each chunk: the `require` shim taken out, chunk imports made opaque. The
 * same bundle unminified is made first beside it (and
 * removed) so every `require` is seen under its plain name; the minified one must resolve the
 * same ones. Throws with the bundler's message when it fails, and before writing a chunk when a
 * `require` or a literal dynamic import is left.
 *
 * @example
 * ```ts
 * import { bundleTo } from "./bundle.ts";
 * await bundleTo("/work/main", "/work/main/dist/agentteams");
 * ```
 */
export async function bundleTo(root: string, outdir: string): Promise<string[]> {
  const plainDir = `${outdir}.plain`;
  let plain: Unshimmed;
  try {
    plain = postPass(plainDir, await denoBundle(root, plainDir, false));
  } finally {
    Deno.removeSync(plainDir, { recursive: true });
  }
  const files = await denoBundle(root, outdir, true);
  const minified = postPass(outdir, files);
  if (!sameRequires(plain.requires, minified.requires)) {
    throw new Error(
      `the minified bundle resolves other requires (${JSON.stringify([...minified.requires])}) ` +
        `than the plain one (${JSON.stringify([...plain.requires])})`,
    );
  }
  const rewritten = new Map<string, string>();
  for (const [name, js] of minified.chunks) {
    const text = opaqueChunkImports(js);
    // Fail closed: a literal file import in another shape would silently slow every start.
    const left = LITERAL_IMPORT.exec(text);
    if (left !== null) throw new Error(`${name}: a literal dynamic import is left: ${left[0]}`);
    rewritten.set(name, text);
  }
  for (const [name, text] of rewritten) Deno.writeTextFileSync(`${outdir}/${name}`, text);
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
