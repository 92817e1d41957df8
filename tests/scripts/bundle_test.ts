/**
 * The bundle's post-pass: chunk imports become opaque to Deno's graph builder, nothing else; a
 * literal import it cannot make opaque stops the bundle.
 */
import assert from "node:assert/strict";
import { bundleTo, opaqueChunkImports } from "../../scripts/bundle.ts";

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
