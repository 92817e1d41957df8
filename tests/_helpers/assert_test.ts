/**
 * The domain checks of ./assert.ts fail when they should: a refusal check that cannot fail would
 * let every refusal test pass vacuously. Also the rule of ./assert.ts, checked on the tree.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { LedgerError, SandboxError } from "../../lib/errors.ts";
import { assertCliRefused, assertRefusal, assertSameTree, hangGuard } from "./assert.ts";
import { REPO_ROOT, type RunResult, snapshotTree, snapshotTreeSync } from "./mod.ts";

const AssertionError = assert.AssertionError;

const tampered = () => new LedgerError("LEDGER_TAMPERED", "the head does not match");

/** Asserts `fn` fails the test (an AssertionError) with a message matching `re`. */
function fails(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof AssertionError && re.test(e.message));
}

/** Async version of {@link fails}. */
async function failsAsync(fn: () => Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(fn, (e: unknown) => e instanceof AssertionError && re.test(e.message));
}

Deno.test("assertRefusal: the refusal asked for passes and is returned, sync and async", async () => {
  const e = assertRefusal(() => {
    throw tampered();
  }, "LEDGER_TAMPERED");
  assert.ok(e instanceof LedgerError);
  const typed: LedgerError = assertRefusal(
    () => {
      throw tampered();
    },
    "LEDGER_TAMPERED",
    LedgerError,
  );
  assert.equal(typed.message, "the head does not match");
  const later = await assertRefusal(
    () => Promise.reject(tampered()),
    "LEDGER_TAMPERED",
    LedgerError,
  );
  assert.equal(later.code, "LEDGER_TAMPERED");
  const asyncFn = await assertRefusal(async () => {
    await Promise.resolve();
    throw tampered();
  }, "LEDGER_TAMPERED");
  assert.equal(asyncFn.code, "LEDGER_TAMPERED");
});

Deno.test("assertRefusal: a wrong code fails, sync and async, naming both codes", async () => {
  fails(() =>
    assertRefusal(() => {
      throw tampered();
    }, "LEDGER_HEAD_MISSING"), /expected code LEDGER_HEAD_MISSING, got LEDGER_TAMPERED/);
  await failsAsync(
    () => assertRefusal(() => Promise.reject(tampered()), "LEDGER_HEAD_MISSING", LedgerError),
    /expected code LEDGER_HEAD_MISSING, got LEDGER_TAMPERED/,
  );
});

Deno.test("assertRefusal: a refusal of another class fails, even with the code asked for", () => {
  fails(
    () =>
      assertRefusal(
        () => {
          throw new SandboxError("CONFINED_INVALID", "x");
        },
        "CONFINED_INVALID",
        LedgerError,
      ),
    /expected a refusal LedgerError CONFINED_INVALID, got SandboxError CONFINED_INVALID/,
  );
});

Deno.test("assertRefusal: what is no refusal fails: success, a value, a plain or merely coded error", async () => {
  fails(() => assertRefusal(() => {}, "LEDGER_TAMPERED"), /but it returned: undefined/);
  fails(() => assertRefusal(() => 42, "LEDGER_TAMPERED", LedgerError), /but it returned: 42/);
  await failsAsync(
    () => assertRefusal(() => Promise.resolve("fine"), "LEDGER_TAMPERED"),
    /but it resolved: 'fine'/,
  );
  await failsAsync(
    () => assertRefusal(async () => {}, "LEDGER_TAMPERED", LedgerError),
    /but it resolved: undefined/,
  );
  fails(() =>
    assertRefusal(() => {
      throw new Error("boom");
    }, "LEDGER_TAMPERED"), /expected a refusal AgentTeamsError LEDGER_TAMPERED, got .*boom/);
  // An error that merely carries the code (a Node-style errno, a look-alike) is no refusal.
  const lookalike = Object.assign(new Error("look-alike"), { code: "LEDGER_TAMPERED" });
  fails(() =>
    assertRefusal(() => {
      throw lookalike;
    }, "LEDGER_TAMPERED"), /got .*look-alike/);
  await failsAsync(
    () => assertRefusal(() => Promise.reject(lookalike), "LEDGER_TAMPERED"),
    /got .*look-alike/,
  );
  // A failed assertion inside `fn` is not a refusal either, and is kept as the cause.
  try {
    assertRefusal(() => assert.equal(1, 2), "LEDGER_TAMPERED");
    assert.fail("not reached");
  } catch (e) {
    assert.ok(e instanceof AssertionError && e.cause instanceof AssertionError, String(e));
  }
});

Deno.test("assertRefusal: the message prefixes the failure", () => {
  fails(() => assertRefusal(() => 1, "LEDGER_TAMPERED", LedgerError, "row 3"), /^row 3: /);
});

Deno.test("assertCliRefused: one refusal line with the command and code, and the exit", () => {
  const run = (stderr: string, code = 1): RunResult => ({ code, signal: null, stdout: "", stderr });
  const line = "agentteams run: refused: TIMEOUT: took too long\n";
  assert.deepEqual(assertCliRefused(run(line), "run", "TIMEOUT"), {
    command: "run",
    code: "TIMEOUT",
    reason: "took too long",
  });
  fails(() => assertCliRefused(run(line), "run", "ARGV_NOT_ALLOWED"), /refused: TIMEOUT/);
  fails(() => assertCliRefused(run(line), "apply", "TIMEOUT"), /refused: TIMEOUT/);
  fails(() => assertCliRefused(run(line, 3), "run", "TIMEOUT"), /exit 1 expected, got 3/);
  fails(() => assertCliRefused(run(line + line), "run", "TIMEOUT"), /one refusal line/);
  fails(() => assertCliRefused(run("error: boom\n"), "run", "TIMEOUT"), /one refusal line/);
});

Deno.test("assertSameTree: a change of content, mode, inode, kind or target, an entry created or removed, each fails", async () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-assert-" }));
  try {
    Deno.writeTextFileSync(`${dir}/a`, "a\n");
    Deno.mkdirSync(`${dir}/d`);
    Deno.symlinkSync("a", `${dir}/l`);
    const before = await snapshotTree(dir);
    assert.deepEqual([...before.keys()], [dir, `${dir}/a`, `${dir}/d`, `${dir}/l`]);
    assertSameTree(before, await snapshotTree(dir));
    assertSameTree(before, snapshotTreeSync(dir));
    const changes: [string, () => void, RegExp][] = [
      ["inode (the same bytes and mode, replaced by a rename)", () => {
        Deno.writeFileSync(`${dir}/a.new`, Deno.readFileSync(`${dir}/a`));
        Deno.chmodSync(`${dir}/a.new`, Deno.statSync(`${dir}/a`).mode! & 0o7777);
        Deno.renameSync(`${dir}/a.new`, `${dir}/a`);
      }, /a changed/],
      ["content", () => Deno.writeTextFileSync(`${dir}/a`, "b\n"), /a changed/],
      ["mode", () => Deno.chmodSync(`${dir}/a`, 0o600), /a changed/],
      ["target", () => {
        Deno.removeSync(`${dir}/l`);
        Deno.symlinkSync("d", `${dir}/l`);
      }, /l changed/],
      ["kind", () => {
        Deno.removeSync(`${dir}/l`);
        Deno.mkdirSync(`${dir}/l`);
      }, /l changed/],
      ["created", () => Deno.writeTextFileSync(`${dir}/d/new`, ""), /d\/new was created/],
      ["removed", () => Deno.removeSync(`${dir}/d`, { recursive: true }), /d was removed/],
    ];
    for (const [what, change, re] of changes) {
      const start = snapshotTreeSync(dir);
      change();
      fails(() => assertSameTree(start, snapshotTreeSync(dir), what), re);
    }
    // Ignored entries are left out, but what lies below an ignored directory is not.
    Deno.mkdirSync(`${dir}/d/keep`, { recursive: true });
    const ignored = snapshotTreeSync(dir, (p) => p === `${dir}/d`);
    assert.equal(ignored.has(`${dir}/d`), false);
    assert.equal(ignored.has(`${dir}/d/keep`), true);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("hangGuard: passes a settled promise through; fails one still pending at its bound", async () => {
  assert.equal(await hangGuard(Promise.resolve(7), "a resolved promise"), 7);
  await assert.rejects(hangGuard(Promise.reject(new Error("own")), "a rejected one"), /own/);
  await failsAsync(
    () => hangGuard(new Promise<never>(() => {}), "a promise that never settles", 50),
    /^hang guard: a promise that never settles still pending after 0.05 s: hung$/,
  );
});

/** Every .ts file under `dir`, recursively (test data excluded). */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory && e.name !== "testdata") out.push(...tsFiles(p));
    else if (e.isFile && e.name.endsWith(".ts")) out.push(p);
  }
  return out.sort();
}

Deno.test('the rule: node:assert only as `import assert from "node:assert/strict"`, domain checks defined only in tests/_helpers/assert.ts', () => {
  const tests = join(REPO_ROOT, "tests");
  const own = join(tests, "_helpers", "assert.ts");
  const files = tsFiles(tests);
  assert.ok(files.length > 100, `scanned only ${files.length} files`);
  const problems: string[] = [];
  const checks =
    /\b(?:function|const|let)\s+(assertRefusal|assertRefused|assertCode|assertSameTree|assertCliRefused|assertEquals|assert)\b/;
  for (const f of files) {
    const text = Deno.readTextFileSync(f);
    const rel = f.slice(tests.length + 1);
    for (const m of text.matchAll(/^\s*import\b[^;]*?from\s+"(node:assert[^"]*)"/gm)) {
      if (!/^\s*import assert from "node:assert\/strict"$/.test(m[0])) {
        problems.push(`${rel}: ${m[0].trim()}`);
      }
    }
    if (/from "[^"]*_assert\.ts"/.test(text)) problems.push(`${rel}: imports an _assert.ts`);
    const def = checks.exec(text);
    if (f !== own && def !== null) problems.push(`${rel}: defines ${def[1]}`);
  }
  assert.deepEqual(problems, []);
});
