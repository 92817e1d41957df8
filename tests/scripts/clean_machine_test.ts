/**
 * The test command on a clean machine (issue 23 item 7): nothing the suite runs in Python needs a
 * package beyond Python's standard library, checked the way a clean machine would see it. Every
 * Python program of the suite (the `.py` files under tests/ and scripts/, and each inline
 * `python3 -c` program in a test) is scanned for its imports; each top-level module must be one
 * of `sys.stdlib_module_names` and must import in a Python started with `-I -S` (isolated, no
 * site-packages: no pip package is visible). And `scripts/test`, the suite's prerequisites check,
 * names every program the suite spawns by bare name that a minimal Debian lacks.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";

const dec = new TextDecoder();

function walk(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory && e.name !== "node_modules" && !e.name.startsWith(".")) {
      out.push(...walk(p, keep));
    } else if (e.isFile && keep(e.name)) out.push(p);
  }
  return out;
}

/** The top-level modules a Python program's text imports. */
function importsOf(program: string): string[] {
  const out = new Set<string>();
  for (const line of program.split("\n")) {
    const imp = /^\s*import\s+([\w., ]+?)(\s+as\s+\w+)?\s*(#.*)?$/.exec(line);
    if (imp !== null) {
      for (const m of imp[1].split(",")) out.add(m.trim().split(/\s+/)[0].split(".")[0]);
    }
    const from = /^\s*from\s+([\w.]+)\s+import\b/.exec(line);
    if (from !== null && !from[1].startsWith(".")) out.add(from[1].split(".")[0]);
  }
  out.delete("");
  return [...out];
}

/** The inline programs of `new Deno.Command("python3", { args: ["-c", ...] })` in a test. */
function inlinePrograms(ts: string): string[] {
  const out: string[] = [];
  for (const m of ts.matchAll(/Command\("python3",\s*\{\s*args:\s*\[([\s\S]*?)\]\s*,/g)) {
    // The string literals of the args, their escapes undone ("\n" is a line break).
    const literals = [...m[1].matchAll(/"((?:[^"\\]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)].map((x) =>
      (x[1] ?? x[2]).replace(/\\n/g, "\n").replace(/\\(["'\\`])/g, "$1")
    );
    out.push(literals.join(""));
  }
  return out;
}

Deno.test("every Python program of the suite imports only the standard library, and those import with python3 -I -S", async () => {
  const programs: [string, string][] = [];
  for (
    const f of [
      ...walk(join(REPO_ROOT, "tests"), (n) => n.endsWith(".py")),
      ...walk(join(REPO_ROOT, "scripts"), (n) => n.endsWith(".py")),
    ]
  ) programs.push([relative(REPO_ROOT, f), Deno.readTextFileSync(f)]);
  for (const f of walk(join(REPO_ROOT, "tests"), (n) => n.endsWith(".ts"))) {
    for (const p of inlinePrograms(Deno.readTextFileSync(f))) {
      programs.push([`${relative(REPO_ROOT, f)} (python3 -c)`, p]);
    }
  }
  // The scan finds what it must: the .py fixtures and the inline CSV and HMAC programs.
  assert.ok(
    programs.filter(([f]) => f.endsWith(".py")).length >= 5,
    programs.map(([f]) => f).join(),
  );
  assert.ok(programs.filter(([f]) => f.endsWith("(python3 -c)")).length >= 4);
  const stdlibOut = await new Deno.Command("python3", {
    args: [
      "-I",
      "-S",
      "-c",
      "import sys, json; print(json.dumps(sorted(sys.stdlib_module_names)))",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(stdlibOut.code, 0, dec.decode(stdlibOut.stderr));
  const stdlib = new Set(JSON.parse(dec.decode(stdlibOut.stdout)) as string[]);
  // A package pip would install is refused by the check (it can fail).
  assert.ok(!stdlib.has("jsonschema"));
  const outside: string[] = [];
  const all = new Set<string>();
  for (const [file, text] of programs) {
    for (const m of importsOf(text)) {
      all.add(m);
      if (!stdlib.has(m)) outside.push(`${file}: import ${m}`);
    }
  }
  assert.deepEqual(outside, [], "Python imports outside the standard library");
  // And they import on a Python that sees no site-packages, as on a clean machine.
  const mods = [...all].sort();
  assert.ok(mods.includes("csv") && mods.includes("hmac"), mods.join());
  const r = await new Deno.Command("python3", {
    args: ["-I", "-S", "-c", `import ${mods.join(", ")}`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 0, dec.decode(r.stderr));
});

Deno.test("scripts/test checks for every program the suite spawns by name that a minimal Debian lacks", () => {
  const script = Deno.readTextFileSync(join(REPO_ROOT, "scripts", "test"));
  const checked = new Set(
    [...script.matchAll(/command -v (\S+) >\/dev\/null 2>&1 \|\| missing\+=\((\S+)\)/g)].map((m) =>
      m[1]
    ),
  );
  // setsid's check names its package (util-linux); the others are named as the program.
  assert.ok(checked.has("git") && checked.has("python3"), [...checked].join());
  // Programs a minimal Debian (debian:stable-slim) has: the shell, coreutils, perl-base.
  const base = new Set([
    "bash",
    "sh",
    "env",
    "perl",
    "id",
    "cat",
    "cp",
    "mkfifo",
    "true",
    "false",
    "sleep",
  ]);
  const spawned = new Set<string>();
  for (const f of walk(join(REPO_ROOT, "tests"), (n) => n.endsWith(".ts"))) {
    for (const m of Deno.readTextFileSync(f).matchAll(/new Deno\.Command\("([a-z0-9_.-]+)"/g)) {
      spawned.add(m[1]);
    }
  }
  assert.ok(spawned.has("python3") && spawned.has("git"), [...spawned].join());
  const unchecked = [...spawned].filter((p) => !base.has(p) && !checked.has(p)).sort();
  assert.deepEqual(unchecked, [], "spawned by the tests, not checked by scripts/test");
});
