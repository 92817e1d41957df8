/**
 * The import-graph checker (tests/_arch/imports.ts) on small fixture trees written to a temporary
 * directory: each rule catches a deliberately bad import, a clean tree passes, and what sits in
 * comments, strings, template text and JSDoc examples is not an import. The parser is checked
 * against `deno info --json` on a fixture full of traps.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  checkRepo,
  externalName,
  formatViolations,
  type ImportSite,
  type LayerTable,
  parseImports,
  resolveSpecifier,
  type Rule,
  tableProblems,
  type Violation,
} from "./imports.ts";
import { denoInfoSpecifiers } from "./deno_info.ts";
import { tokenize } from "./tokenize.ts";

// ---------------------------------------------------------------------------------------------
// Fixtures

/** Top to bottom: top (main.ts, src/top/, src/ui/), mid (src/a/, src/b/, src/c/), base. */
const TABLE: LayerTable = {
  scan: ["main.ts", "src/"],
  layers: [
    { name: "top", paths: ["main.ts", "src/top/", "src/ui/"], externals: ["node:*"] },
    { name: "mid", paths: ["src/a/", "src/b/", "src/c/"], externals: ["node:*", "zod"] },
    { name: "base", paths: ["src/base/", "src/errors.ts"], externals: ["node:*", "zod"] },
  ],
};

/**
 * A tree that follows TABLE: top -> mid -> base; within mid, b -> a and c -> b (no cycle); static,
 * type-only, dynamic, side-effect and re-export imports; and imports that are not imports.
 */
const CLEAN: Record<string, string> = {
  "main.ts": [
    `import { run } from "./src/top/cmd.ts";`,
    `await run();`,
  ].join("\n"),
  "src/top/cmd.ts": [
    `import {`,
    `  x,`,
    `  type X,`,
    `} from "../a/x.ts";`,
    `import type { Y } from "../b/y.ts";`,
    `import { join } from "node:path";`,
    `/** Runs. */`,
    `export async function run(): Promise<void> {`,
    `  const { z } = await import("../c/z.ts");`,
    `  const y: Y | X = x;`,
    `  console.log(join("a", "b"), z, y);`,
    `}`,
  ].join("\n"),
  "src/top/flags.ts": `export const FLAGS = ["--json"];\n`,
  "src/ui/theme.ts": `export const THEME = "plain";\n`,
  "src/a/x.ts": [
    `import "../base/init.ts";`,
    `import { fail } from "../errors.ts";`,
    `export type X = number;`,
    `export const x: X = fail.length;`,
  ].join("\n"),
  "src/a/leaf.ts": `export const LEAF = 1;\n`,
  "src/b/y.ts": [
    `export * from "../a/x.ts";`,
    `export { LEAF as leaf } from "../a/leaf.ts";`,
    `export type Y = string;`,
  ].join("\n"),
  "src/b/leaf.ts": `export const B_LEAF = 2;\n`,
  "src/c/z.ts": [
    `import type { Y } from "../b/y.ts";`,
    `export const z: Y = "z";`,
  ].join("\n"),
  "src/c/leaf.ts": `export const C_LEAF = 3;\n`,
  "src/base/init.ts": [
    `import { z } from "zod";`,
    `import { fail } from "../errors.ts";`,
    `export const schema = z.string();`,
    `export { fail };`,
  ].join("\n"),
  "src/errors.ts": [
    // Every way to write "import" that is not an import; each would be upward, missing or a
    // cycle if it were read as one.
    `/**`,
    ` * The errors.`,
    ` *`,
    " * ```ts",
    ` * import { fail } from "./errors.ts";`,
    ` * import { run } from "./top/cmd.ts";`,
    ` * const m = await import("./nowhere.ts");`,
    " * ```",
    ` */`,
    `// import "./top/cmd.ts";`,
    `/* export * from "./top/flags.ts"; */`,
    `const a = 'import "./top/cmd.ts"';`,
    `const b = "export { x } from './top/cmd.ts'";`,
    'const c = `import("./top/cmd.ts") ${a.length} import "./top/flags.ts"`;',
    `const d = /import "\\.\\/top\\/cmd\\.ts"['"\`]/g;`,
    `const e = { import: 1, export: 2 }.import / 2;`,
    `const f = import.meta.url;`,
    `class K { import() { return 1; } }`,
    `export const fail = [a, b, c, d, e, f, new K().import()];`,
  ].join("\n"),
};

/** Writes `files` under a fresh temporary directory; returns it. */
async function writeTree(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "at-arch-" });
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, dirname(path)), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
  return root;
}

/** The checker's findings on CLEAN with `changes` applied (a `null` removes the file). */
async function findings(
  changes: Record<string, string | null> = {},
  table: LayerTable = TABLE,
): Promise<Violation[]> {
  const files: Record<string, string> = { ...CLEAN };
  for (const [path, text] of Object.entries(changes)) {
    if (text === null) delete files[path];
    else files[path] = text;
  }
  const root = await writeTree(files);
  try {
    return await checkRepo(root, table);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** The (rule, file, line, specifier) of each violation. */
const brief = (vs: readonly Violation[]) => vs.map((v) => [v.rule, v.file, v.line, v.specifier]);

/** Asserts exactly `expected` were found, printing every finding when not. */
function assertFound(
  found: readonly Violation[],
  expected: [Rule, string, number, string][],
): void {
  assert.deepEqual(brief(found), expected, formatViolations(found));
}

/** The one violation of `rule` in `found`. */
function only(found: readonly Violation[], rule: Rule): Violation {
  const mine = found.filter((v) => v.rule === rule);
  assert.equal(mine.length, 1, formatViolations(found));
  return mine[0];
}

// ---------------------------------------------------------------------------------------------
// The clean tree

Deno.test("arch: the clean fixture tree passes", async () => {
  assertFound(await findings(), []);
});

Deno.test("arch: the clean fixture's imports are read as written, and only those", () => {
  const read = (path: string) =>
    parseImports(CLEAN[path]).imports.map((s) => [s.specifier, s.line, s.kind, s.typeOnly]);
  assert.deepEqual(read("src/top/cmd.ts"), [
    ["../a/x.ts", 4, "import", false],
    ["../b/y.ts", 5, "import", true],
    ["node:path", 6, "import", false],
    ["../c/z.ts", 9, "dynamic", false],
  ]);
  assert.deepEqual(read("src/b/y.ts"), [
    ["../a/x.ts", 1, "re-export", false],
    ["../a/leaf.ts", 2, "re-export", false],
  ]);
  assert.deepEqual(read("src/a/x.ts"), [
    ["../base/init.ts", 1, "side-effect", false],
    ["../errors.ts", 2, "import", false],
  ]);
  const errors = parseImports(CLEAN["src/errors.ts"]);
  assert.deepEqual(errors, { imports: [], problems: [] });
});

// ---------------------------------------------------------------------------------------------
// Each rule, on a deliberately bad import

Deno.test("arch: an upward import is reported with file, line and specifier", async () => {
  const found = await findings({
    "src/base/init.ts": CLEAN["src/base/init.ts"] + `\nimport { FLAGS } from "../top/flags.ts";`,
  });
  // top/ depends on base/ (through a/), so base/ -> top/ also closes a folder cycle.
  assertFound(found, [
    ["upward", "src/base/init.ts", 5, "../top/flags.ts"],
    ["folder-cycle", "src/a/x.ts", 1, "../base/init.ts"],
  ]);
  assert.match(found[0].message, /base \(src\/base\/\) imports src\/top\/flags\.ts in top/);
  const cycle = found[1].message.split("\n");
  assert.match(cycle[0], /src\/a\/ -> src\/base\/ -> src\/top\/ -> src\/a\/; break one hop/);
  assert.equal(
    cycle[2],
    `  src/base/ -> src/top/: src/base/init.ts:5 import of "../top/flags.ts" [upward]`,
  );
});

Deno.test("arch: an upward import into a unit that does not depend on the importer", async () => {
  // src/ui/ is in the top layer and imports nothing, so this closes no cycle.
  const found = await findings({
    "src/base/init.ts": CLEAN["src/base/init.ts"] + `\nimport { THEME } from "../ui/theme.ts";`,
  });
  assertFound(found, [["upward", "src/base/init.ts", 5, "../ui/theme.ts"]]);
});

Deno.test("arch: a type-only upward import is still upward", async () => {
  const found = await findings({
    "src/a/leaf.ts": `import type { FLAGS } from "../top/flags.ts";\nexport const LEAF = 1;\n`,
  });
  assertFound(found, [
    ["upward", "src/a/leaf.ts", 1, "../top/flags.ts"],
    ["folder-cycle", "src/a/leaf.ts", 1, "../top/flags.ts"],
  ]);
  assert.match(found[0].message, /^type-only import of "\.\.\/top\/flags\.ts"/);
});

Deno.test("arch: upward through a dynamic import, an `export * from` and `typeof import()`", async () => {
  const found = await findings({
    "src/a/leaf.ts": [
      `export * from "../top/flags.ts";`,
      `export const load = () => import("../top/cmd.ts");`,
      `export type T = typeof import("../../main.ts");`,
    ].join("\n"),
  });
  // The dynamic import of cmd.ts also closes a cycle: cmd -> a/x.ts, and a/ -> top/ -> a/.
  assertFound(found.filter((v) => v.rule === "upward"), [
    ["upward", "src/a/leaf.ts", 1, "../top/flags.ts"],
    ["upward", "src/a/leaf.ts", 2, "../top/cmd.ts"],
    ["upward", "src/a/leaf.ts", 3, "../../main.ts"],
  ]);
  assert.match(found[1].message, /^dynamic import of/);
});

Deno.test("arch: a cycle between two folders, with no cycle between files", async () => {
  // b -> a is allowed; a -> b as well, but not both.
  const found = await findings({
    "src/a/leaf.ts": `import { B_LEAF } from "../b/leaf.ts";\nexport const LEAF = B_LEAF;\n`,
  });
  assertFound(found, [["folder-cycle", "src/a/leaf.ts", 1, "../b/leaf.ts"]]);
  const lines = found[0].message.split("\n");
  assert.equal(
    lines[0],
    "a cycle between folders (table units): src/a/ -> src/b/ -> src/a/; break one hop:",
  );
  assert.equal(lines[1], `  src/a/ -> src/b/: src/a/leaf.ts:1 import of "../b/leaf.ts"`);
  assert.equal(lines[2], `  src/b/ -> src/a/: src/b/y.ts:1 import of "../a/x.ts" (and 1 more)`);
});

Deno.test("arch: a transitive folder cycle (a -> c -> b -> a) names every hop", async () => {
  const found = await findings({
    "src/a/leaf.ts": `import { C_LEAF } from "../c/leaf.ts";\nexport const LEAF = C_LEAF;\n`,
  });
  const v = only(found, "folder-cycle");
  assertFound(found, [["folder-cycle", "src/a/leaf.ts", 1, "../c/leaf.ts"]]);
  assert.match(v.message, /src\/a\/ -> src\/c\/ -> src\/b\/ -> src\/a\/; break one hop/);
  assert.match(
    v.message,
    /src\/c\/ -> src\/b\/: src\/c\/z\.ts:1 type-only import of "\.\.\/b\/y\.ts"/,
  );
});

Deno.test("arch: a cycle between files in one folder, static", async () => {
  const found = await findings({
    "src/a/p.ts": `import { q } from "./q.ts";\nexport const p = () => q;\n`,
    "src/a/q.ts": `import { p } from "./p.ts";\nexport const q = () => p;\n`,
  });
  assertFound(found, [["file-cycle", "src/a/p.ts", 1, "./q.ts"]]);
  assert.match(
    found[0].message,
    /^a cycle between files: src\/a\/p\.ts -> src\/a\/q\.ts -> src\/a\/p\.ts;/,
  );
});

Deno.test("arch: a file cycle through a dynamic import", async () => {
  const found = await findings({
    "src/a/p.ts": `import { q } from "./q.ts";\nexport const p = () => q;\n`,
    "src/a/q.ts": `export const q = async () => (await import("./p.ts")).p;\n`,
  });
  assertFound(found, [["file-cycle", "src/a/p.ts", 1, "./q.ts"]]);
  assert.match(found[0].message, /src\/a\/q\.ts:1 dynamic import of "\.\/p\.ts"/);
});

Deno.test("arch: a file cycle through `export * from`, across three files", async () => {
  const found = await findings({
    "src/a/p.ts": `export * from "./q.ts";\n`,
    "src/a/q.ts": `export * from "./r.ts";\nexport const q = 1;\n`,
    "src/a/r.ts": `import { q } from "./p.ts";\nexport const r = q;\n`,
  });
  assertFound(found, [["file-cycle", "src/a/p.ts", 1, "./q.ts"]]);
  assert.match(
    found[0].message,
    /src\/a\/p\.ts -> src\/a\/q\.ts -> src\/a\/r\.ts -> src\/a\/p\.ts/,
  );
});

Deno.test("arch: a file importing itself is a cycle", async () => {
  const found = await findings({
    "src/a/leaf.ts": `import "./leaf.ts";\nexport const LEAF = 1;\n`,
  });
  assertFound(found, [["file-cycle", "src/a/leaf.ts", 1, "./leaf.ts"]]);
});

Deno.test("arch: a file in no layer is reported once, however many import it", async () => {
  const found = await findings({
    "src/stray/util.ts": `export const u = 1;\n`,
    "src/a/leaf.ts": `import { u } from "../stray/util.ts";\nexport const LEAF = u;\n`,
  });
  assertFound(found, [["uncovered", "src/stray/util.ts", 1, ""]]);
  assert.match(found[0].message, /is in no layer: add it/);
});

Deno.test("arch: externals: each layer imports only what its allowlist names", async () => {
  const found = await findings({
    "src/top/flags.ts": [
      `import { z } from "zod";`,
      `import { y } from "npm:yaml@2";`,
      `import { join } from "node:path";`,
      `export const FLAGS = [z, y, join];`,
    ].join("\n"),
  });
  assertFound(found, [
    ["external", "src/top/flags.ts", 1, "zod"],
    ["external", "src/top/flags.ts", 2, "npm:yaml@2"],
  ]);
  assert.match(found[0].message, /layer top may not import zod \(only mid, base may\)/);
  assert.match(found[1].message, /may not import npm:yaml \(no layer may\)/);
});

Deno.test("arch: an import of a file that does not exist, static or dynamic", async () => {
  const found = await findings({
    "src/c/leaf.ts": `import "./gone.ts";\nexport const f = () => import("../b/gone.ts");\n`,
  });
  assertFound(found, [
    ["missing", "src/c/leaf.ts", 1, "./gone.ts"],
    ["missing", "src/c/leaf.ts", 2, "../b/gone.ts"],
  ]);
  assert.match(found[1].message, /src\/b\/gone\.ts does not exist/);
});

Deno.test("arch: a non-literal dynamic import is itself a violation", async () => {
  const found = await findings({
    "src/c/leaf.ts": [
      `const name = "./z.ts";`,
      'export const f = (x: string) => [import(name), import(`./${x}.ts`), import("./z" + x)];',
    ].join("\n"),
  });
  assertFound(found, [
    ["dynamic-nonliteral", "src/c/leaf.ts", 2, ""],
    ["dynamic-nonliteral", "src/c/leaf.ts", 2, ""],
    ["dynamic-nonliteral", "src/c/leaf.ts", 2, ""],
  ]);
  assert.match(found[0].message, /^import\(name\) has no literal specifier/);
});

Deno.test("arch: an import leaving the repository, or of a file outside every layer", async () => {
  const found = await findings({
    "tests/helper.ts": `export const h = 1;\n`,
    "src/c/leaf.ts": [
      `import "../../../elsewhere/x.ts";`,
      `import { h } from "../../tests/helper.ts";`,
      `import "/abs/path.ts";`,
      `export const C_LEAF = h;`,
    ].join("\n"),
  });
  assertFound(found, [
    ["outside", "src/c/leaf.ts", 1, "../../../elsewhere/x.ts"],
    ["outside", "src/c/leaf.ts", 2, "../../tests/helper.ts"],
    ["outside", "src/c/leaf.ts", 3, "/abs/path.ts"],
  ]);
  assert.match(found[1].message, /tests\/helper\.ts is in no layer/);
});

Deno.test("arch: a ranked layer's units import only those listed after them", async () => {
  const ranked: LayerTable = {
    ...TABLE,
    layers: TABLE.layers.map((l) =>
      l.name === "mid" ? { ...l, paths: ["src/c/", "src/b/", "src/a/"], ranked: true } : l
    ),
  };
  assertFound(await findings({}, ranked), []);
  const found = await findings({
    "src/b/leaf.ts": `import { C_LEAF } from "../c/leaf.ts";\nexport const B_LEAF = C_LEAF;\n`,
  }, ranked);
  // c/z.ts -> b/y.ts exists, so b/ -> c/ is also a folder cycle.
  assertFound(found, [
    ["rank", "src/b/leaf.ts", 1, "../c/leaf.ts"],
    ["folder-cycle", "src/b/leaf.ts", 1, "../c/leaf.ts"],
  ]);
  assert.match(found[0].message, /within mid, src\/b\/ may import only units listed after it/);
  // Unranked, only the cycle is reported.
  assertFound(
    await findings({
      "src/b/leaf.ts": `import { C_LEAF } from "../c/leaf.ts";\nexport const B_LEAF = C_LEAF;\n`,
    }),
    [["folder-cycle", "src/b/leaf.ts", 1, "../c/leaf.ts"]],
  );
});

Deno.test("arch: surfaces: a folder is used from outside only through what its mod.ts re-exports", async () => {
  const table: LayerTable = {
    ...TABLE,
    layers: TABLE.layers.map((l) => (l.name === "mid" ? { ...l, surfaces: true } : l)),
  };
  // Each mid folder's surface: a/ and b/ re-export what the clean tree uses; c/ exports all of z.
  const surfaces = {
    "src/a/mod.ts": `export { type X, x } from "./x.ts";\nexport { LEAF } from "./leaf.ts";\n`,
    "src/b/mod.ts": `export type { Y } from "./y.ts";\n`,
    "src/c/mod.ts": `export * from "./z.ts";\n`,
  };
  // The clean tree, with its surfaces: b/y.ts's `export *` of a/x.ts takes all of a file that
  // a/mod.ts names only in part, so it is the one finding.
  assertFound(await findings(surfaces, table), [["surface", "src/b/y.ts", 1, "../a/x.ts"]]);
  const clean = {
    ...surfaces,
    "src/b/y.ts": `export { x } from "../a/mod.ts";\nexport type Y = string;\n`,
  };
  assertFound(await findings(clean, table), []);
  const found = await findings({
    ...clean,
    "src/top/cmd.ts": [
      `import { x } from "../a/x.ts";`, // a public name, from its file: allowed
      `import { B_LEAF } from "../b/leaf.ts";`, // b/mod.ts re-exports nothing from leaf.ts
      `import { type X, hidden } from "../a/x.ts";`, // X is public, hidden is not
      `import * as all from "../a/x.ts";`, // the whole module, private names too
      `import { LEAF } from "../a/mod.ts";`, // the surface itself: allowed
      `import { C_LEAF } from "../c/leaf.ts";`, // c/mod.ts re-exports only z.ts
      `import { z } from "../c/z.ts";`, // export *: every name of z.ts is public
      `export const load = () => import("../a/x.ts");`, // a public file, loaded lazily: allowed
      `export const y: X = x + LEAF + B_LEAF + hidden + all.x + z.length + C_LEAF;`,
    ].join("\n"),
    "src/a/x.ts": CLEAN["src/a/x.ts"] + `\nexport const hidden = 1;`,
    // Inside its own folder, any file may import any other.
    "src/a/leaf.ts": `import { hidden } from "./x.ts";\nexport const LEAF = hidden;\n`,
  }, table);
  assertFound(found, [
    ["surface", "src/top/cmd.ts", 2, "../b/leaf.ts"],
    ["surface", "src/top/cmd.ts", 3, "../a/x.ts"],
    ["surface", "src/top/cmd.ts", 4, "../a/x.ts"],
    ["surface", "src/top/cmd.ts", 6, "../c/leaf.ts"],
  ]);
  assert.match(found[0].message, /src\/b\/mod\.ts re-exports nothing from it/);
  assert.match(found[1].message, /does not re-export hidden from it: add it to src\/a\/mod\.ts/);
  assert.match(found[2].message, /takes the whole module/);
  // A folder without a mod.ts has no surface at all: any outside import of it is refused.
  const bare = await findings({ ...clean, "src/c/mod.ts": null }, table);
  assertFound(bare, [["surface", "src/top/cmd.ts", 9, "../c/z.ts"]]);
  assert.match(bare[0].message, /which has no mod\.ts/);
});

Deno.test("arch: a file the tokenizer cannot read is reported, not passed", async () => {
  const found = await findings({ "src/c/leaf.ts": `import "../b/leaf.ts";\nconst s = "open;\n` });
  assertFound(found, [["unparsable", "src/c/leaf.ts", 2, ""]]);
});

Deno.test("arch: a malformed layer table is refused", async () => {
  assert.deepEqual(
    tableProblems({
      scan: ["src/"],
      layers: [
        { name: "one", paths: ["src/a/", "./src/b/"] },
        { name: "two", paths: ["src/a/"] },
      ],
    }),
    [
      'layer one: "./src/b/" must be a path relative to the root',
      '"src/a/" is in both one and two',
    ],
  );
  await assert.rejects(
    () => findings({}, { ...TABLE, layers: [...TABLE.layers, { name: "x", paths: ["main.ts"] }] }),
    /the layer table is malformed/,
  );
});

// ---------------------------------------------------------------------------------------------
// The parser

/** The specifiers (and kinds) parseImports reads from `src`. */
const specs = (src: string) => parseImports(src).imports.map((s: ImportSite) => s.specifier);

Deno.test("parser: every form of import and re-export", () => {
  const src = [
    `import a from "./a.ts";`,
    `import * as b from "./b.ts";`,
    `import c, { d } from "./c.ts";`,
    `import type { E } from "./e.ts";`,
    `import type F from "./f.ts";`,
    `import { type G, type H as I } from "./g.ts";`,
    `import { type J, k } from "./j.ts";`,
    `import type from "./type.ts";`,
    `import "./side.ts";`,
    `import json from "./data.json" with { type: "json" };`,
    `import L = require("./l.ts");`,
    `export * from "./star.ts";`,
    `export * as ns from "./ns.ts";`,
    `export { m } from "./m.ts";`,
    `export type { N } from "./n.ts";`,
    `export type * from "./types.ts";`,
    `export { o };`,
    `export const p = await import("./p.ts");`,
    `export const q = import(\`./q.ts\`, { with: { type: "json" } });`,
    `type R = typeof import("./r.ts");`,
    `const s = \`\${(await import("./s.ts")).default}\`;`,
  ].join("\n");
  const got = parseImports(src).imports.map((s) => [s.specifier, s.line, s.kind, s.typeOnly]);
  assert.deepEqual(got, [
    ["./a.ts", 1, "import", false],
    ["./b.ts", 2, "import", false],
    ["./c.ts", 3, "import", false],
    ["./e.ts", 4, "import", true],
    ["./f.ts", 5, "import", true],
    ["./g.ts", 6, "import", true],
    ["./j.ts", 7, "import", false],
    ["./type.ts", 8, "import", false],
    ["./side.ts", 9, "side-effect", false],
    ["./data.json", 10, "import", false],
    ["./l.ts", 11, "import-equals", false],
    ["./star.ts", 12, "re-export", false],
    ["./ns.ts", 13, "re-export", false],
    ["./m.ts", 14, "re-export", false],
    ["./n.ts", 15, "re-export", true],
    ["./types.ts", 16, "re-export", true],
    ["./p.ts", 18, "dynamic", false],
    ["./q.ts", 19, "dynamic", false],
    ["./r.ts", 20, "type-query", true],
    ["./s.ts", 21, "dynamic", false],
  ]);
  assert.deepEqual(parseImports(src).problems, []);
  // The names each takes, as the module exports them (absent: the whole module).
  const names = parseImports(src).imports.map((s) => s.names ?? "*");
  assert.deepEqual(names, [
    ["default"],
    "*",
    ["default", "d"],
    ["E"],
    ["default"],
    ["G", "H"],
    ["J", "k"],
    ["default"],
    [],
    ["default"],
    "*",
    "*",
    "*",
    ["m"],
    ["N"],
    "*",
    "*",
    "*",
    "*",
    "*",
  ]);
});

Deno.test("parser: a multi-line import list, with comments inside, reads its specifier line", () => {
  const src = [
    `import {`,
    `  a, // the first`,
    `  /* "not-this.ts" */ b,`,
    `  c as "d",`,
    `} from`,
    `  "./multi.ts";`,
  ].join("\n");
  assert.deepEqual(parseImports(src).imports.map((s) => [s.specifier, s.line]), [[
    "./multi.ts",
    6,
  ]]);
});

Deno.test("parser: comments, strings, templates, regexes and JSDoc examples are not imports", () => {
  const src = [
    `#!/usr/bin/env -S deno run`,
    `// import "./line-comment.ts";`,
    `/* import "./block-comment.ts"; */`,
    `/**`,
    " * ```ts",
    ` * import { x } from "./mod.ts";`,
    ` * export * from "./mod.ts";`,
    ` * await import("./mod.ts");`,
    " * ```",
    ` */`,
    `const a = "import './double.ts'";`,
    `const b = 'export * from "./single.ts"';`,
    'const c = `import "./template.ts" ${\'}\'} import("./template2.ts") ${`import "./nested.ts"`}`;',
    `const d = /import ".\\/regex.ts"/;`,
    `const e = a.length / 2 / 1; // import "./after-division.ts"`,
    `const f = [/['"\`]/g, /[/]import "x"/];`,
    `const g = "a \\" import './escaped-quote.ts'";`,
    `const h = { import: "./key.ts" }.import;`,
    `const i = import.meta.resolve("./meta.ts");`,
    `class J { import() { return "./method.ts"; } }`,
    `const k = '\\u0069mport "./escape.ts"';`,
  ].join("\n");
  const parsed = parseImports(src);
  assert.deepEqual(parsed, { imports: [], problems: [] });
  // Not vacuous: the same lines as code are imports.
  assert.deepEqual(specs(`import { x } from "./mod.ts";\nawait import("./mod.ts");`), [
    "./mod.ts",
    "./mod.ts",
  ]);
});

Deno.test("parser: an import after tricky literals on the same line is still read", () => {
  const src = [
    "const t = `${`${'`'}`}`; import \"./after-template.ts\";",
    `const r = /"/; import "./after-regex.ts";`,
    `const q = a / b / c; import "./after-division.ts";`,
    `const u = a.length / 2, v = "/"; import "./after-division-and-slash.ts";`,
    `if (x) { } /'/.test(y); import "./after-block-regex.ts";`,
  ].join("\n");
  assert.deepEqual(specs(src), [
    "./after-template.ts",
    "./after-regex.ts",
    "./after-division.ts",
    "./after-division-and-slash.ts",
    "./after-block-regex.ts",
  ]);
});

Deno.test("parser: a non-literal dynamic import is returned with its argument, not dropped", () => {
  const got = parseImports("const m = import(base + `/x.ts`);\nimport(`./${n}.ts`);").imports;
  assert.deepEqual(got.map((s) => [s.specifier, s.line, s.argument]), [
    [null, 1, "base + `...`"],
    [null, 2, "`...` n"],
  ]);
});

Deno.test("parser: unterminated strings, templates and comments are problems with their line", () => {
  assert.deepEqual(tokenize(`ok;\n"open\n`).problems, [
    { line: 2, message: "unterminated string literal" },
  ]);
  assert.deepEqual(tokenize("a;\n\n`open ${x}").problems, [
    { line: 3, message: "unterminated template literal" },
  ]);
  assert.deepEqual(tokenize(`a;\n/* open`).problems, [
    { line: 2, message: "unterminated block comment" },
  ]);
  assert.deepEqual(parseImports(`import { a } "./x.ts";`).problems, [
    { line: 1, message: "an `import` this parser cannot read" },
  ]);
});

Deno.test("parser: lines are counted through comments, templates and line continuations", () => {
  const src = `/*\n\n*/ const a = \`\n\n\`; const b = "x\\\ny";\nimport "./x.ts";`;
  assert.deepEqual(parseImports(src).imports.map((s) => s.line), [7]);
});

Deno.test("resolveSpecifier and externalName", () => {
  assert.deepEqual(resolveSpecifier("main.ts", "./lib/cli/main.ts"), {
    kind: "local",
    path: "lib/cli/main.ts",
  });
  assert.deepEqual(resolveSpecifier("lib/a/x.ts", "../b/./y.ts"), {
    kind: "local",
    path: "lib/b/y.ts",
  });
  assert.equal(resolveSpecifier("lib/x.ts", "../../up.ts").kind, "outside");
  assert.equal(resolveSpecifier("lib/x.ts", "file:///etc/x.ts").kind, "outside");
  assert.deepEqual(resolveSpecifier("lib/x.ts", "zod"), { kind: "external", name: "zod" });
  const names = [
    "npm:zod@4.6.7",
    "npm:@scope/pkg@1/sub",
    "node:fs/promises",
    "zod/v4",
    "@scope/pkg/sub",
    "jsr:@std/path@1",
    "https://example.com/x.ts",
  ].map(externalName);
  assert.deepEqual(names, [
    "npm:zod",
    "npm:@scope/pkg",
    "node:fs",
    "zod",
    "@scope/pkg",
    "jsr:@std/path",
    "https://example.com/x.ts",
  ]);
});

// ---------------------------------------------------------------------------------------------
// The oracle

Deno.test("oracle: the parser reads the specifiers deno info reads, on the clean tree and the traps", async () => {
  const traps: Record<string, string> = {
    "src/traps.ts": [
      `/** \`\`\`ts`,
      ` * import { x } from "./mod.ts";`,
      ` * \`\`\` */`,
      `import {`,
      `  type A,`,
      `  b, // "./comment.ts"`,
      `} from "./a/x.ts";`,
      `import type { Y } from "./b/y.ts";`,
      `export * from "./c/z.ts";`,
      `export type { X } from "./a/x.ts";`,
      "const t = `${`${'`'}`}` + 'import \"./string.ts\"';",
      `const r = /"/.test(t) ? /import "\\.\\/regex.ts"/ : null;`,
      `export const d = () => import("./a/leaf.ts");`,
      "export const e = () => import(`./b/leaf.ts`);",
      `export type Q = typeof import("./c/leaf.ts");`,
      `import "./errors.ts";`,
      `import "./missing.ts";`,
      `import { z } from "zod";`,
      `export { b, r };`,
      `export type { A, Y };`,
    ].join("\n"),
  };
  const root = await writeTree({ ...CLEAN, ...traps });
  try {
    const files = [...Object.keys(CLEAN), ...Object.keys(traps)].sort();
    const oracle = await denoInfoSpecifiers(root, files);
    for (const file of files) {
      const ours = [...new Set(specs({ ...CLEAN, ...traps }[file]))].sort();
      assert.deepEqual(ours, oracle.get(file), file);
    }
    assert.equal(oracle.get("src/traps.ts")?.length, 9);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
