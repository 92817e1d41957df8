/**
 * The bundle's post-pass: chunk imports become opaque to Deno's graph builder, nothing else; a
 * literal import it cannot make opaque stops the bundle.
 */
import assert from "node:assert/strict";
import { bundleTo, opaqueChunkImports, unshimRequires } from "../../scripts/bundle.ts";

Deno.test("opaqueChunkImports rewrites the bundler's chunk imports and nothing else", () => {
  const js = [
    'run: async (ctx) => (await import("./run-F3YFZ6A6.js")).run(ctx),',
    'schema: () => import("./schema-7NDBDPZQ.js"),',
    'import { x } from "./chunk-4DAHCVKC.js";',
    'const s = "import(\\"not code\\")";',
    'reimport("./x.js");',
  ].join("\n");
  assert.equal(
    opaqueChunkImports(js),
    [
      'run: async (ctx) => (await import(String("./run-F3YFZ6A6.js"))).run(ctx),',
      'schema: () => import(String("./schema-7NDBDPZQ.js")),',
      'import { x } from "./chunk-4DAHCVKC.js";',
      'const s = "import(\\"not code\\")";',
      'reimport("./x.js");',
    ].join("\n"),
  );
  // Specifiers outside the bundle directory are never touched.
  assert.equal(opaqueChunkImports('import("../x.js")'), 'import("../x.js")');
  assert.equal(opaqueChunkImports('import("node:fs")'), 'import("node:fs")');
});

Deno.test("bundleTo: a literal chunk import it cannot make opaque is refused, the file left as bundled", async () => {
  const root = Deno.makeTempDirSync({ prefix: "agentteams-bundle-refusal-" });
  try {
    // `+` is outside the chunk names the rewrite knows, so that import would stay literal.
    Deno.writeTextFileSync(`${root}/ok.ts`, "export const x = 1;\n");
    Deno.writeTextFileSync(`${root}/a+b.ts`, "export const y = 2;\n");
    Deno.writeTextFileSync(
      `${root}/main.ts`,
      'console.log((await import("./ok.ts")).x, (await import("./a+b.ts")).y);\n',
    );
    const outdir = `${root}/dist`;
    await assert.rejects(
      bundleTo(root, outdir),
      /main\.js: a literal dynamic import is left: import\("\.\//,
    );
    // Refused before main.js was written: even its rewritable import is as the bundler left it.
    const main = Deno.readTextFileSync(`${outdir}/main.js`);
    assert.match(main, /import\("\.\/ok-[A-Z0-9]+\.js"\)/);
    assert.match(main, /import\("\.\/a\+b-[A-Z0-9]+\.js"\)/);
    assert.doesNotMatch(main, /String\(/);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

/** The `node:` built-ins a chunk imports, statically or dynamically. */
function builtinsOf(js: string): Set<string> {
  const out = new Set<string>();
  // The bundler keeps JSDoc, whose examples import node:assert/strict: a comment line is no
  // import. And @hpke/common (the result seal, which queue mode loads) falls back to
  // `const { webcrypto } = await import("crypto")` only when `globalThis.crypto` is missing
  // (Node <= 18), never on Deno: that one line is not counted either.
  const code = js.split("\n")
    .filter((l) => !/^\s*\*/.test(l))
    .join("\n")
    .replace(
      /\b(?:const|let|var) ?\{ ?webcrypto(?::[\w$]+)? ?\} ?= ?await import\("node:crypto"\)/g,
      "",
    );
  for (const m of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)"(node:[a-z_/]+)"/g)) {
    out.add(m[1]);
  }
  return out;
}

/**
 * The chunks a start can load from `entries`: their static imports, and (outside `main.js`, whose
 * table names every command's chunk) the chunks they import dynamically, closed over.
 */
function closure(
  dir: string,
  entries: readonly string[],
  staticOnly: ReadonlySet<string> = new Set(["main.js"]),
): Set<string> {
  const seen = new Set<string>();
  const todo = [...entries];
  while (todo.length > 0) {
    const name = todo.pop() as string;
    if (seen.has(name)) continue;
    seen.add(name);
    const js = Deno.readTextFileSync(`${dir}/${name}`);
    for (const m of js.matchAll(/(?:\bfrom\s*|\bimport\s*)"\.\/([A-Za-z0-9_.-]+\.js)"/g)) {
      todo.push(m[1]);
    }
    if (staticOnly.has(name)) continue;
    for (const m of js.matchAll(/\bimport\(String\("\.\/([A-Za-z0-9_.-]+\.js)"\)\)/g)) {
      todo.push(m[1]);
    }
  }
  return seen;
}

/** The chunks the command table of `main.js` names for the command `words`. */
function commandChunks(main: string, words: readonly string[]): string[] {
  const entries = main.split(/\bwords: ?\[/).slice(1);
  const key = words.map((w) => `"${w}"`).join(",");
  const entry = entries.find((e) => e.split("]")[0].replace(/\s+/g, "") === key);
  if (entry === undefined) throw new Error(`no table entry for ${words.join(" ")}`);
  return [...entry.matchAll(/\bimport\(String\("\.\/([A-Za-z0-9_.-]+\.js)"\)\)/g)].map((m) => m[1]);
}

Deno.test("the release bundle: the chunks run, apply, dispatch, ledger verify and --version load import no node: module they do not use", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "agentteams-bundle-builtins-" });
  try {
    const root = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
    await bundleTo(root, dir);
    // The command table sits in the chunk main.js loads once `--version` is ruled out: its
    // static closure is every command's start, its dynamic imports each command's own code.
    const tableChunk = [...Deno.readDirSync(dir)]
      .map((f) => f.name)
      .filter((n) => n.endsWith(".js"))
      .find((n) => /\bwords: ?\[\s*"dispatch"\s*\]/.test(Deno.readTextFileSync(`${dir}/${n}`)));
    assert.ok(tableChunk !== undefined, "no chunk holds the command table");
    const main = Deno.readTextFileSync(`${dir}/${tableChunk}`);
    const statics = new Set(["main.js", tableChunk]);
    const builtins = (chunks: Iterable<string>): string[] => {
      const all = new Set<string>();
      for (const c of chunks) {
        for (const b of builtinsOf(Deno.readTextFileSync(`${dir}/${c}`))) all.add(b);
      }
      return [...all].sort();
    };
    // `--version` loads main.js's static closure alone; every command's start adds the table's.
    // Neither imports a built-in, so no Node compatibility layer.
    assert.deepEqual(builtins(closure(dir, ["main.js"], statics)), []);
    const start = closure(dir, ["main.js", tableChunk], statics);
    assert.deepEqual(builtins(start), []);
    const cases: [string[], string[]][] = [
      [["dispatch"], []],
      [["ledger", "verify"], []],
      // node:crypto's SHA-1 for git blob ids, imported on first use by the snapshot's fingerprint.
      [["run"], ["node:crypto"]],
      [["apply"], []],
    ];
    for (const [words, allowed] of cases) {
      const chunks = closure(dir, ["main.js", tableChunk, ...commandChunks(main, words)], statics);
      assert.ok(chunks.size > start.size, `${words.join(" ")} loads its own chunks`);
      assert.deepEqual(builtins(chunks), allowed, words.join(" "));
    }
    // The analysis sees built-ins where they are: the audit parses YAML with the `yaml` package's
    // CommonJS build, whose `require`s of built-ins became imports of that chunk alone.
    const audit = builtins(
      closure(dir, ["main.js", tableChunk, ...commandChunks(main, ["audit"])], statics),
    );
    assert.ok(audit.includes("node:process"), audit.join());
    // No chunk imports node:module (the bundler's require shim is gone), and each is minified.
    for (const f of Deno.readDirSync(dir)) {
      if (f.name.endsWith(".js")) {
        const js = Deno.readTextFileSync(`${dir}/${f.name}`);
        assert.ok(!builtinsOf(js).has("node:module"), f.name);
        // (The unminified bundle keeps our JSDoc; licence comments stay either way.)
        assert.ok(!/\n\s+\* @example/.test(js), `${f.name} is not minified`);
      }
    }
    // The minifier renamed the classes; a refusal keeps its name (lib/errors.ts spells them).
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-config", "-A", `${dir}/main.js`, "no-such-command", "--json"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 2);
    const json = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(json.error.code, "UNKNOWN_COMMAND");
    assert.equal(json.error.error, "UsageError");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("unshimRequires: built-in requires become static imports of the chunk using them; the shim throws; any other require stops the bundle", () => {
  const runtime =
    'import { createRequire as __deno_internal_createRequire } from "node:module";\n' +
    "var __require = __deno_internal_createRequire(import.meta.url);\n" +
    "var __commonJS = (cb, mod) => function __require2() { return mod; };\n" +
    "export { __commonJS, __require };\n";
  const user = 'import { __require } from "./rt.js";\n' +
    'var p = __require("node:process");\nvar b = __require("node:buffer");\n' +
    'var q = __require("node:process");\n';
  const { chunks: out, requires } = unshimRequires(
    new Map([["rt.js", runtime], ["a.js", user], ["b.js", "x;\n"]]),
  );
  assert.deepEqual([...requires].sort(), [["buffer", 1], ["process", 2]]);
  assert.equal(
    out.get("a.js"),
    'import __node_buffer from "node:buffer";\nimport __node_process from "node:process";\n' +
      'import { __require } from "./rt.js";\n' +
      "var p = __node_process;\nvar b = __node_buffer;\nvar q = __node_process;\n",
  );
  assert.ok(!out.get("rt.js")?.includes("node:module"));
  assert.match(out.get("rt.js") ?? "", /var __require = \(id\) => \{\n {2}throw new Error/);
  assert.equal(out.get("b.js"), "x;\n");
  assert.throws(
    () => unshimRequires(new Map([["c.js", 'var x = __require("./local.cjs");\n']])),
    /c\.js: a require the bundle cannot resolve is left: __require\("\.\/local\.cjs"\)/,
  );
  assert.throws(
    () => unshimRequires(new Map([["d.js", "var x = __require(name);\n"]])),
    /d\.js: a require the bundle cannot resolve is left/,
  );
});
