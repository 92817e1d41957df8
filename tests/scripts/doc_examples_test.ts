/**
 * The JSDoc examples: every exported function in `lib/` has one, and every example in `lib/`,
 * `main.ts` and `scripts/` type-checks against the code it shows (a renamed field or a changed
 * signature fails here, not in a reader's editor), except those marked `ts ignore`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runDeno, tempDir } from "../_helpers/mod.ts";

/** The `.ts` files below `dir` (absolute), sorted. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...tsFiles(p));
    else if (e.isFile && e.name.endsWith(".ts")) out.push(p);
  }
  return out.sort();
}

/** `file: name` for each exported function whose JSDoc has no `@example`. */
function functionsWithoutExample(file: string): string[] {
  const text = Deno.readTextFileSync(file);
  const missing: string[] = [];
  for (const m of text.matchAll(/^export (?:async )?function\*? ?(\w+)/gm)) {
    // The JSDoc right above: from the line that opens it (a `/**` that starts its line; an
    // example may hold `/**` inside a glob) to the `*/` just before the function.
    const lines = text.slice(0, m.index).trimEnd().split("\n");
    let doc = "";
    if (lines.at(-1)?.trim().endsWith("*/")) {
      let start = lines.length - 1;
      while (start > 0 && !lines[start].trimStart().startsWith("/**")) start--;
      doc = lines.slice(start).join("\n");
    }
    if (!doc.includes("@example")) missing.push(`${file.slice(REPO_ROOT.length + 1)}: ${m[1]}`);
  }
  return missing;
}

Deno.test("every exported function in lib/ has an @example in its JSDoc", () => {
  const missing = tsFiles(join(REPO_ROOT, "lib")).flatMap(functionsWithoutExample);
  assert.deepEqual(missing, [], `without an example:\n${missing.join("\n")}`);
});

Deno.test("the example finder sees a missing example and an example in place", () => {
  const dir = Deno.makeTempDirSync({ prefix: "at-docex-" });
  try {
    const file = join(dir, "m.ts");
    Deno.writeTextFileSync(
      file,
      [
        '/** Has one, with a glob in it.\n * @example\n * ```ts\n * a("src/**");\n * ```\n */',
        "export function a(): void {}",
        "/** Has none. */",
        "export async function b(): Promise<void> {}",
        "/**\n * @example\n * ```ts\n * x\n * ```\n */",
        "const between = 1;",
        "export function c(): number {\n  return between;\n}",
      ].join("\n"),
    );
    // `c`'s nearest JSDoc belongs to `between`: it counts as none.
    assert.deepEqual(
      functionsWithoutExample(file).map((l) => l.split(": ")[1]),
      ["b", "c"],
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/**
 * The project's own compiler options, but without the noUnused* checks: Deno's example check
 * imports every export of the module into each example, which those checks would refuse. Written
 * to `dir`; returns its path.
 */
function exampleConfig(dir: string): string {
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json")));
  const { noUnusedLocals: _l, noUnusedParameters: _p, ...compilerOptions } = config.compilerOptions;
  const path = join(dir, "deno.json");
  Deno.writeTextFileSync(
    path,
    JSON.stringify({ compilerOptions, imports: config.imports, unstable: config.unstable }),
  );
  return path;
}

/**
 * Modules whose every example runs and asserts what it shows (`deno test --doc`): the library
 * surface first, then the core rules written as runnable examples. Others show their use in
 * examples that only type-check (they need a real project, keys or a sandbox).
 */
export const RUNNABLE_EXAMPLES: readonly string[] = [
  "lib/mod.ts",
  "lib/env.ts",
  "lib/cli/project_root.ts",
  "lib/fs/entry.ts",
  "lib/fs/rel_path.ts",
  "lib/fs/within.ts",
  "lib/git/repo_shape.ts",
  "lib/host/programs.ts",
  "lib/policy/agents.ts",
  "lib/policy/control_plane.ts",
];

Deno.test("the runnable JSDoc examples run under deno test --doc and their assertions hold", async () => {
  const dir = await tempDir("docrun");
  try {
    const r = await runDeno(
      [
        "test",
        "--doc",
        "--no-lock",
        `--config=${exampleConfig(dir)}`,
        "--allow-all",
        ...RUNNABLE_EXAMPLES,
      ],
      { cwd: REPO_ROOT, hangGuardMs: 300_000 },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    // Every listed module contributed examples that ran and passed (none was silently empty).
    // deno-lint-ignore no-control-regex -- terminal colours in deno test's own output
    const out = r.stdout.replaceAll(/\x1b\[[0-9;]*m/g, "");
    for (const file of RUNNABLE_EXAMPLES) {
      const ran = out.split("\n").filter((l) => l.includes(`/${file}#`) && l.includes(" ... ok"));
      assert.ok(ran.length > 0, `no example of ${file} ran:\n${out}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno doc --lint finds the library's entry points complete: documented, no private types", async () => {
  // deno.json's exports: the library (sessions and acts), the audit and the triad.
  const exports = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`)).exports;
  const entries = ["./lib/mod.ts", "./lib/team_audit.ts", "./lib/triad.ts"];
  assert.deepEqual(entries.map((e) => Object.values(exports).includes(e)), [true, true, true]);
  const r = await runDeno(["doc", "--lint", ...entries], {
    cwd: REPO_ROOT,
    hangGuardMs: 120_000,
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
});

Deno.test("every JSDoc example in lib/, main.ts and scripts/ not marked `ignore` type-checks", async () => {
  const dir = await tempDir("docex");
  try {
    const path = exampleConfig(dir);
    const r = await runDeno(
      ["check", "--no-lock", `--config=${path}`, "--doc-only", "lib/", "main.ts", "scripts/"],
      { cwd: REPO_ROOT, hangGuardMs: 300_000 },
    );
    assert.equal(r.code, 0, r.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
