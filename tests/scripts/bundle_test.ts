/** The bundle's post-pass: chunk imports become opaque to Deno's graph builder, nothing else. */
import assert from "node:assert/strict";
import { opaqueChunkImports } from "../../scripts/bundle.ts";

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
