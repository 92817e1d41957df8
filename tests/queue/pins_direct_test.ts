/**
 * The runner's pin of the operator's direct-write grants file (lib/queue/pins.ts): absent is
 * `null`, a change is `RUNNER_PIN_CHANGED` naming the file, and a FIFO or a link at the path is
 * a state of its own, never read through (a FIFO cannot hang the runner's every check).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { checkPins, pinPaths, readPins } from "../../lib/queue/pins.ts";
import { QueueError } from "../../lib/errors.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { assertRefusal } from "../_helpers/assert.ts";
import { runDeno } from "../_helpers/mod.ts";

Deno.test("pins: the direct-grants file, absent, changed, a FIFO, a link", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "at-pins-direct-" });
  try {
    const file = join(dir, "grants.json");
    const paths = pinPaths(dir, join(dir, "agentteams.jsonc"), null, file);
    const absent = await readPins(paths);
    assert.equal(absent.direct, null);
    Deno.writeTextFileSync(file, "[]\n");
    const at = await readPins(paths);
    assert.equal(at.direct, sha256Hex("[]\n"));
    const e = assertRefusal(() => checkPins(absent, at, paths), "RUNNER_PIN_CHANGED", QueueError);
    assert.match(e.message, /the operator's direct-write grants file \(.*grants\.json\) changed/);
    checkPins(at, await readPins(paths), paths);

    Deno.removeSync(file);
    const mk = new Deno.Command("mkfifo", { args: [file] }).outputSync();
    assert.equal(mk.code, 0, "mkfifo");
    const fifo = (await readPins(paths)).direct;
    assert.match(String(fifo), /^unreadable:/);
    const afterFifo = await readPins(paths);
    assertRefusal(() => checkPins(at, afterFifo, paths), "RUNNER_PIN_CHANGED", QueueError);

    Deno.removeSync(file);
    Deno.writeTextFileSync(join(dir, "real.json"), "[]\n");
    Deno.symlinkSync(join(dir, "real.json"), file);
    const link = (await readPins(paths)).direct;
    assert.match(String(link), /^unreadable:/, "a link is never followed");
    assert.notEqual(link, at.direct);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/**
 * Runs `body` in a child Deno with `checkPins`, `pinPaths`, `readPins` and a fresh `dir` in scope,
 * under a hang guard: a pin read that opened a FIFO would wait for a writer forever (the runner's
 * main thread, before every claim), which must fail the test, not hang it. The child ends with
 * `Deno.exit` (an open left waiting would keep it alive). Returns what it printed.
 */
async function pinsInChild(prefix: string, body: string): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix });
  const pins = JSON.stringify(new URL("../../lib/queue/pins.ts", import.meta.url).href);
  const code = `import { checkPins, pinPaths, readPins } from ${pins};\n` +
    `const dir = ${JSON.stringify(dir)};\n${body}\nDeno.exit(0);\n`;
  try {
    const r = await runDeno(["eval", "--no-check", code], { hangGuardMs: 20_000 });
    assert.equal(r.signal, null, `the child was killed (it waited on a FIFO): ${r.stderr}`);
    assert.equal(r.code, 0, `the child did not finish: ${r.stderr}`);
    return r.stdout.trim();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("pins: the brief, the confined-programs file and the grants ledger each swapped for a FIFO: read without waiting (a state of its own, never an open that waits for a writer), and the change stops the runner", async () => {
  const out = await pinsInChild(
    "at-pins-fifo-",
    `
    const brief = dir + "/agentteams.jsonc", confined = dir + "/confined.json";
    Deno.mkdirSync(dir + "/references");
    Deno.writeTextFileSync(brief, "{}");
    Deno.writeTextFileSync(confined, "{}");
    Deno.writeTextFileSync(dir + "/references/capability-grants.log.csv", "a\\n");
    const paths = pinPaths(dir, brief, confined);
    const at = await readPins(paths);
    const out = [];
    for (const f of [brief, confined, paths.grants]) {
      Deno.renameSync(f, f + ".aside");
      new Deno.Command("/usr/bin/mkfifo", { args: [f] }).outputSync();
      const now = await readPins(paths);
      try { checkPins(at, now, paths); out.push("unchanged"); } catch (e) { out.push(e.code); }
      Deno.removeSync(f);
      Deno.renameSync(f + ".aside", f);
    }
    checkPins(at, await readPins(paths), paths);
    console.log(out.join(","));
  `,
  );
  assert.equal(out, "RUNNER_PIN_CHANGED,RUNNER_PIN_CHANGED,RUNNER_PIN_CHANGED");
});

Deno.test("pins: a FIFO swapped in between a pin's lstat and its open is a changed pin after the open's deadline, never a runner that waits for a writer", async () => {
  // The swap is made exact by answering the lstat with a plain file's facts while the path is a
  // FIFO.
  const out = await pinsInChild(
    "at-pins-fifo-race-",
    `
    const brief = dir + "/agentteams.jsonc", plain = dir + "/plain.jsonc";
    Deno.writeTextFileSync(brief, "{}");
    Deno.writeTextFileSync(plain, "{}");
    const paths = pinPaths(dir, brief, null);
    const at = await readPins(paths);
    Deno.removeSync(brief);
    new Deno.Command("/usr/bin/mkfifo", { args: [brief] }).outputSync();
    const lstat = Deno.lstatSync;
    Deno.lstatSync = (p) => String(p) === brief ? lstat(plain) : lstat(p);
    const now = await readPins(paths);
    Deno.lstatSync = lstat;
    let outcome = "unchanged";
    try { checkPins(at, now, paths); } catch (e) { outcome = e.code; }
    console.log(now.brief + " " + outcome);
  `,
  );
  assert.equal(out, "unreadable:NOT_REGULAR_FILE RUNNER_PIN_CHANGED");
});
