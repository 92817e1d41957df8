/**
 * The JSDoc examples: every exported function in `lib/` has one, and every example in `lib/`,
 * `main.ts` and `scripts/` type-checks against the code it shows (a renamed field or a changed
 * signature fails here, not in a reader's editor), except those marked `ts ignore`.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT, runDeno, tempDir } from "../_helpers/mod.ts";
import { writeExampleConfig } from "../../scripts/doc_test.ts";

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

/** Runs `fn` on a module `m.ts` holding `text`, in a temp folder removed after. */
function withModule(text: string, fn: (file: string) => void): void {
  const dir = Deno.makeTempDirSync({ prefix: "at-docex-" });
  try {
    const file = join(dir, "m.ts");
    Deno.writeTextFileSync(file, text);
    fn(file);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("every exported function in lib/ has an @example in its JSDoc", () => {
  const missing = tsFiles(join(REPO_ROOT, "lib")).flatMap(functionsWithoutExample);
  assert.deepEqual(missing, [], `without an example:\n${missing.join("\n")}`);
});

Deno.test("the example finder sees a missing example and an example in place", () => {
  withModule(
    [
      '/** Has one, with a glob in it.\n * @example\n * ```ts\n * a("src/**");\n * ```\n */',
      "export function a(): void {}",
      "/** Has none. */",
      "export async function b(): Promise<void> {}",
      "/**\n * @example\n * ```ts\n * x\n * ```\n */",
      "const between = 1;",
      "export function c(): number {\n  return between;\n}",
    ].join("\n"),
    (file) => {
      // `c`'s nearest JSDoc belongs to `between`: it counts as none.
      assert.deepEqual(
        functionsWithoutExample(file).map((l) => l.split(": ")[1]),
        ["b", "c"],
      );
    },
  );
});

/**
 * A quick sample of modules whose examples run and assert what they show (`deno test --doc`): the
 * library surface first, then core rules. Every example of lib/ runs in `deno task test:doc`
 * (scripts/doc_test.ts, a step of scripts/test), which takes minutes; this keeps the fast tier
 * honest about the runner itself.
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
        `--config=${writeExampleConfig(dir)}`,
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
    const path = writeExampleConfig(dir);
    const r = await runDeno(
      ["check", "--no-lock", `--config=${path}`, "--doc-only", "lib/", "main.ts", "scripts/"],
      { cwd: REPO_ROOT, hangGuardMs: 300_000 },
    );
    assert.equal(r.code, 0, r.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** `file:line` of each `ts ignore` example in `file` whose next line gives no `// Not run:` reason. */
function ignoredWithoutReason(file: string): string[] {
  const lines = Deno.readTextFileSync(file).split("\n");
  const out: string[] = [];
  lines.forEach((l, i) => {
    if (/^\s*\* ```ts ignore\b/.test(l) && !/^\s*\* \/\/ Not run: \S/.test(lines[i + 1] ?? "")) {
      out.push(`${file.slice(REPO_ROOT.length + 1)}:${i + 1}`);
    }
  });
  return out;
}

Deno.test("every lib/ example that does not run says why, on the line after its ts ignore fence", () => {
  const missing = tsFiles(join(REPO_ROOT, "lib")).flatMap(ignoredWithoutReason);
  assert.deepEqual(missing, [], `ignored without a reason:\n${missing.join("\n")}`);
});

Deno.test("the reason finder sees an ignored example without a reason", () => {
  withModule(
    "/**\n * ```ts ignore\n * // Not run: it needs a project\n * x;\n * ```\n */\n" +
      "/**\n * ```ts ignore\n * x;\n * ```\n */\n",
    (file) => {
      assert.deepEqual(ignoredWithoutReason(file).map((l) => l.split(":").at(-1)), ["8"]);
    },
  );
});

/** The code of `line` before a `//` comment outside string literals, and the comment; or `null`. */
function splitComment(line: string): { code: string; comment: string } | null {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote !== null) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "/" && line[i + 1] === "/") {
      return { code: line.slice(0, i).trim(), comment: line.slice(i + 2).trim() };
    }
  }
  return null;
}

/**
 * A comment that states a value: it starts with a literal (a string, a number, an array, an
 * object, `true`, `false`, `null`, `undefined`, a constructor's name as `Deno.inspect` prints it)
 * or with `e.g.`, or says the call returned or did not throw.
 */
const VALUE_COMMENT =
  /^(?:["'`[{]|-?\d|(?:true|false|null|undefined|NaN)\b|(?:Set|Map|Uint8Array) |e\.g\.|ok\b|no throw)/;

/** Code that asserts (or states a refusal the example checks). */
const ASSERTS = /\bassert\b|assert\.|\bthrows\b/;

/**
 * A statement that computes a value and drops it: it ends in a name, a property or an index (not
 * a call), and assigns, declares and returns nothing (`x.length;`, `a > 0;`, `out;`).
 */
function droppedValue(code: string): boolean {
  const c = code.trim();
  // Brackets closed that this line did not open: the end of a statement begun on earlier lines.
  const bare = c.replaceAll(/"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`/g, '""');
  const depth = (bare.match(/[([{]/g)?.length ?? 0) - (bare.match(/[)\]}]/g)?.length ?? 0);
  return depth === 0 && /[\w$\]]\s*;$/.test(c) && !DECLARATION.test(c) &&
    !/^(?:return|throw|break|continue|await|yield|delete|void|if|else|for|while|do|case)\b/.test(
      c,
    ) &&
    !/(?<![=!<>])=(?![=>])/.test(bare) && !/(?:\+\+|--)\s*;$/.test(c);
}

/** A line that declares (or imports) rather than states an expression's value. */
const DECLARATION = /^\s*(?:import|export|const|let|var|function|class|type|interface)\b/;

/**
 * `file:line` of each line of a runnable example in `file` (a `ts` block not marked `ignore`) that
 * states a value in a comment without asserting it: `expr; // value`, or an expression line
 * followed by a comment line that is only the value. Assert the value instead
 * (`node:assert/strict`), or mark the example `ts ignore` with its reason.
 */
export function unassertedValues(file: string): string[] {
  const lines = Deno.readTextFileSync(file).split("\n");
  const out: string[] = [];
  let inRunnable = false;
  let prevCode: string | null = null;
  lines.forEach((raw, i) => {
    const fence = /^\s*\* ```(\S*)(.*)$/.exec(raw);
    if (fence !== null) {
      inRunnable = !inRunnable && /^(?:ts|typescript)$/.test(fence[1]) &&
        !/\bignore\b/.test(fence[2]);
      prevCode = null;
      return;
    }
    if (!inRunnable) return;
    const line = raw.replace(/^\s*\* ?/, "");
    const split = splitComment(line);
    const flag = () => out.push(`${file.slice(REPO_ROOT.length + 1)}:${i + 1}`);
    if (split === null || split.code !== "") {
      const code = split === null ? line : split.code;
      if (split !== null && !ASSERTS.test(code) && VALUE_COMMENT.test(split.comment)) flag();
      else if (droppedValue(code)) flag();
      prevCode = code.trim() === "" ? null : code;
    } else {
      // A comment line in the run right after an expression statement that asserts nothing.
      const stated = prevCode !== null && /;\s*$/.test(prevCode) && !DECLARATION.test(prevCode) &&
        !ASSERTS.test(prevCode);
      if (stated && VALUE_COMMENT.test(split.comment)) flag();
    }
  });
  return out;
}

Deno.test("no runnable lib/ example states a value in a comment instead of asserting it", () => {
  const found = tsFiles(join(REPO_ROOT, "lib")).flatMap(unassertedValues);
  assert.deepEqual(found, [], `values stated, not asserted:\n${found.join("\n")}`);
});

/** `file:line` of each runnable example (a `ts` block not marked `ignore`) in `file` that asserts nothing. */
export function examplesWithoutAssert(file: string): string[] {
  const lines = Deno.readTextFileSync(file).split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*\* ```(\S+)(.*)$/.exec(lines[i]);
    if (fence === null) continue;
    let j = i + 1;
    while (j < lines.length && !/^\s*\* ```\s*$/.test(lines[j])) j++;
    const runnable = /^(?:ts|typescript)$/.test(fence[1]) && !/\bignore\b/.test(fence[2]);
    if (runnable && !lines.slice(i + 1, j).some((l) => ASSERTS.test(l))) {
      out.push(`${file.slice(REPO_ROOT.length + 1)}:${i + 1}`);
    }
    i = j;
  }
  return out;
}

Deno.test("every runnable lib/ example asserts something", () => {
  const found = tsFiles(join(REPO_ROOT, "lib")).flatMap(examplesWithoutAssert);
  assert.deepEqual(
    found,
    [],
    `examples that assert nothing (assert, or mark them ts ignore with the reason):\n${
      found.join("\n")
    }`,
  );
});

Deno.test("the assert finder sees a runnable example without an assertion, and passes asserted and ignored ones", () => {
  withModule(
    [
      "/**",
      " * ```ts",
      " * f();",
      " * ```",
      " * ```ts",
      " * assert.equal(f(), 1);",
      " * ```",
      " * ```ts ignore",
      " * // Not run: it needs a project",
      " * f();",
      " * ```",
      " */",
    ].join("\n"),
    (file) => assert.deepEqual(examplesWithoutAssert(file).map((l) => l.split(":").at(-1)), ["2"]),
  );
});

Deno.test("the value finder sees `expr; // value`, a value in the comments after, a dropped value; passes asserts and prose", () => {
  withModule(
    [
      "/**",
      " * ```ts",
      ' * f("a // b"); // "value"',
      " * g();",
      ' * // ["x"]',
      " * assert.equal(f(), 1); // 1: the first",
      " * const x = f(); // the brief names it",
      ' * // "x" is what the brief calls it',
      " * use(x);",
      " * // which returns:",
      " * // [1]",
      " * x.length;",
      " * await p;",
      " * let n = 0;",
      " * n++;",
      ' * const argv = ["a",',
      ' *   "b"];',
      " * if (n) n--;",
      " * // A note on what follows.",
      " * h();",
      " * ```",
      " * ```ts ignore",
      " * // Not run: it needs a project",
      " * f(); // 2",
      " * ```",
      " */",
    ].join("\n"),
    (file) => {
      assert.deepEqual(unassertedValues(file).map((l) => l.split(":").at(-1)), [
        "3",
        "5",
        "11",
        "12",
      ]);
    },
  );
});

/**
 * The examples of `file` marked `ts ignore`, each as a module of its own: its code with every
 * relative specifier (`from "./x.ts"`, `import("./x.ts")`) made absolute, so it type-checks from
 * anywhere.
 */
function ignoredExamples(file: string): { name: string; code: string }[] {
  const lines = Deno.readTextFileSync(file).split("\n");
  const out: { name: string; code: string }[] = [];
  const dir = dirname(file);
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\* ```ts ignore\b/.test(lines[i])) continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*\* ```\s*$/.test(lines[j]); j++) {
      body.push(lines[j].replace(/^\s*\* ?/, ""));
    }
    const code = body.join("\n").replaceAll(
      /(from |import\()"(\.{1,2}\/[^"]+)"/g,
      (_m, head: string, rel: string) => `${head}"${pathToFileURL(join(dir, rel)).href}"`,
    );
    const rel = file.slice(REPO_ROOT.length + 1).replaceAll("/", "_").replace(/\.ts$/, "");
    out.push({ name: `${rel}_${i + 1}.ts`, code: `${code}\nexport {};\n` });
    i = j;
  }
  return out;
}

Deno.test("every lib/ example marked not run still type-checks against the code it shows", async () => {
  const dir = await tempDir("docign");
  try {
    const config = writeExampleConfig(dir);
    const examples = tsFiles(join(REPO_ROOT, "lib")).flatMap(ignoredExamples);
    assert.ok(examples.length > 0);
    for (const e of examples) Deno.writeTextFileSync(join(dir, e.name), e.code);
    const r = await runDeno(
      ["check", "--no-lock", `--config=${config}`, ...examples.map((e) => join(dir, e.name))],
      { cwd: dir, hangGuardMs: 300_000 },
    );
    assert.equal(r.code, 0, r.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
