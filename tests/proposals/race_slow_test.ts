/**
 * The check-then-write race. A background process (`_swapper.ts`) keeps exchanging `src/sub`
 * atomically (renameat2 RENAME_EXCHANGE: the name is never missing) between the real directory
 * and a symlink to a directory outside the project, or, in the second variant, to `.git/hooks`.
 * Meanwhile the test applies change proposals to `src/sub/file.txt`, 40 times, each through the
 * real CLI. The directory the link points to holds a decoy `file.txt` with exactly the content
 * the proposal's base names, so a write that followed the link would pass every base check.
 *
 * A `sleep` process whose working directory is the real directory gives the test a view of it
 * wherever the swapper has parked it (`/proc/PID/cwd`), so every outcome is checked against the
 * real bytes, not against the tool's word:
 * - nothing ever appears in, or changes in, the link's target (outside dir or `.git/hooks`);
 * - each apply either succeeded and its content is in the real directory, or was refused with
 *   SYMLINK_ESCAPE, STALE_BASE or TARGET_NOT_FILE and the real file kept its bytes;
 * - each apply added exactly `apply-proposal` (success), `apply-proposal-refused`, or
 *   `apply-proposal` followed by `apply-proposal-refused` (the write-ahead row of a write that
 *   was then refused) to the ledger, and the ledger verifies at the end;
 * - nothing else in the sandbox changed, and no temporary file was left in the real directory.
 *
 * The race window must be hit, not only run: at least one apply must have passed its checks on the
 * real directory and then met the link at the write (its write-ahead row followed by a refusal).
 * The test applies until that happened (at least ITERATIONS times, at most MAX_ITERATIONS) and
 * fails if it never did.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { baseChildEnv, DENO, refusals } from "../_helpers/mod.ts";
import {
  apply,
  assertCliLedgerVerifies,
  assertOnlyChanged,
  dispatch,
  jsonOut,
  ledgerLines,
  makeProject,
  type Project,
  type Row,
  sha256,
  snapshot,
  stateSet,
} from "./_helpers.ts";

const SWAPPER = join(dirname(fileURLToPath(import.meta.url)), "_swapper.ts");
const ITERATIONS = 40;
/** Applies are added past ITERATIONS until the window was hit, up to this many in all. */
const MAX_ITERATIONS = 200;
const PER_NONCE = 20; // below the 25-use cap, whatever the mix of outcomes
const ALLOWED_REFUSALS = new Set(["SYMLINK_ESCAPE", "STALE_BASE", "TARGET_NOT_FILE"]);
const TARGET = "src/sub/file.txt";

/** The swapper child: started, and stopped with its swap count. */
class Swapper {
  #child: Deno.ChildProcess;
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #out = "";

  private constructor(child: Deno.ChildProcess) {
    this.#child = child;
    this.#reader = child.stdout.getReader();
  }

  static async start(a: string, b: string): Promise<Swapper> {
    const child = new Deno.Command(DENO, {
      args: ["run", "--allow-ffi", SWAPPER, a, b, "loop"],
      clearEnv: true,
      env: baseChildEnv(),
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const s = new Swapper(child);
    while (!s.#out.includes("ready\n")) {
      const { value, done } = await s.#reader.read();
      if (done) throw new Error(`the swapper exited before it was ready: ${s.#out}`);
      s.#out += new TextDecoder().decode(value);
    }
    return s;
  }

  /** Stops the loop (the swapper leaves an even count: both names as they started). */
  async stop(): Promise<number> {
    try {
      this.#child.kill("SIGTERM");
    } catch { /* already gone */ }
    for (;;) {
      const { value, done } = await this.#reader.read();
      if (done) break;
      this.#out += new TextDecoder().decode(value);
    }
    const status = await this.#child.status;
    assert.equal(status.code, 0, `the swapper failed: ${this.#out}`);
    const last = this.#out.trim().split("\n").pop() ?? "";
    const swaps = (JSON.parse(last) as { swaps: number }).swaps;
    assert.equal(swaps % 2, 0, "the swapper must stop with the names as they started");
    return swaps;
  }
}

/** A process whose working directory pins the real directory, wherever it is moved. */
function holder(dir: string): Deno.ChildProcess {
  return new Deno.Command("/usr/bin/sleep", {
    args: ["3600"],
    cwd: dir,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

async function race(prefix: string, linkTarget: (p: Project) => string): Promise<void> {
  const p = await makeProject(prefix, {
    brief: `{"agent_policies": {"worker": {"write_scopes": ["src/"]}}}\n`,
    files: { [TARGET]: "initial\n" },
  });
  const real = join(p.root, "src/sub");
  const park = join(p.sb.dir, "park");
  const target = linkTarget(p);
  const decoy = join(target, "file.txt");
  let swapper: Swapper | null = null;
  const pin = holder(real);
  try {
    const nonces = [await dispatch(p, "worker")];
    await Deno.mkdir(park);
    await Deno.symlink(target, join(park, "sub"));
    let expected = "initial\n";
    await Deno.writeTextFile(decoy, expected);
    const targetNames = await names(target);
    const realView = `/proc/${pin.pid}/cwd`;
    assert.equal((await Deno.stat(realView)).ino, (await Deno.stat(real)).ino);
    const before = await snapshot(p);

    swapper = await Swapper.start(real, join(park, "sub"));
    const tally: Record<string, number> = {};
    const violations: string[] = [];
    const leftovers: string[] = [];
    // Applies whose write-ahead row was followed by a refusal: the check passed, the write met
    // the swap (the window between them).
    let windowHits = 0;
    for (let i = 0; i < MAX_ITERATIONS && (i < ITERATIONS || windowHits === 0); i++) {
      if (i >= nonces.length * PER_NONCE) nonces.push(await dispatch(p, "worker"));
      const content = `iteration ${i}\n`;
      const base = sha256(expected);
      const decoyText = expected;
      await Deno.writeTextFile(decoy, decoyText);
      const n = (await ledgerLines(p.root)).length;
      const r = await apply(p, {
        kind: "change-proposal",
        dispatch: nonces[Math.floor(i / PER_NONCE)],
        path: TARGET,
        base_sha256: base,
        content,
        rationale: `race ${i}`,
      });
      const rows = (await ledgerLines(p.root)).slice(n).map((l) => JSON.parse(l) as Row);
      const truth = await Deno.readTextFile(join(realView, "file.txt"));
      const found = refusals(r.stderr);
      const code = r.code === 0 ? "written" : (found[0]?.code ?? `exit ${r.code}`);
      const bad: string[] = [];
      const writeAheadOk = (row: Row | undefined) =>
        row !== undefined && row.action === "apply-proposal" && row.path === TARGET &&
        row.base === base && row.new === sha256(content);
      if (r.code === 0) {
        const out = jsonOut(r);
        if (out.written !== true || out.new_sha256 !== sha256(content)) bad.push("bad JSON output");
        if (rows.length !== 1 || !writeAheadOk(rows[0])) {
          bad.push("rows are not one apply-proposal");
        }
        if (truth !== content) bad.push("reported written, but the real file does not hold it");
      } else {
        if (found.length !== 1) bad.push("not exactly one refusal line");
        if (!ALLOWED_REFUSALS.has(code)) bad.push(`refusal code ${code} is not an allowed one`);
        const last = rows[rows.length - 1];
        const shapeOk = (rows.length === 1 || (rows.length === 2 && writeAheadOk(rows[0]))) &&
          last?.action === "apply-proposal-refused" && last.code === code;
        if (!shapeOk) bad.push("rows are not [refused] or [apply-proposal, refused]");
        if (truth !== expected) {
          bad.push(
            truth === content ? "refused, but the content landed" : "refused, but the file changed",
          );
        }
      }
      // The link's target: the decoy keeps its bytes and nothing new appears there.
      const decoyNow = await Deno.readTextFile(decoy);
      if (decoyNow !== decoyText) {
        bad.push(`the decoy ${decoy} was overwritten with ${JSON.stringify(decoyNow)}`);
      }
      const nowInTarget = await names(target);
      const stray = nowInTarget.filter((x) => !targetNames.includes(x));
      if (stray.length > 0) bad.push(`files appeared in ${target}: ${stray.join(", ")}`);
      for (const x of stray) await Deno.remove(join(target, x), { recursive: true });
      const parked = await names(park);
      if (parked.join() !== "sub") bad.push(`the park holds ${parked.join(", ")}`);
      const inReal = await names(realView);
      if (inReal.join() !== "file.txt") leftovers.push(`iteration ${i}: ${inReal.join(", ")}`);
      if (bad.length > 0) {
        violations.push(
          `iteration ${i} (${code}): ${bad.join("; ")}\n  rows ${JSON.stringify(rows)}\n  ` +
            (found[0] ? `${found[0].code}: ${found[0].reason}` : r.stderr.trim()),
        );
      }
      if (r.code !== 0 && rows.length === 2) windowHits++;
      const key = rows.length === 2 ? `${code} after write-ahead` : code;
      tally[key] = (tally[key] ?? 0) + 1;
      expected = truth; // follow the real bytes, whatever the tool said
    }
    const swaps = await swapper.stop();
    swapper = null;
    console.log(`${prefix}: ${swaps} swaps; outcomes ${JSON.stringify(tally)}`);
    assert.ok(swaps > 0, "the swapper never swapped");
    assert.ok(
      windowHits > 0,
      `no apply met the swap between its check and its write in ${MAX_ITERATIONS} tries: the ` +
        `race window was never hit (outcomes ${JSON.stringify(tally)})`,
    );
    assert.ok((tally.written ?? 0) > 0, "no apply wrote: the real directory was never in place");
    assert.deepEqual(violations, [], `the race broke the rules:\n${violations.join("\n")}`);

    // The real directory is back at src/sub, holding the last written content.
    const st = await Deno.lstat(real);
    assert.ok(st.isDirectory && !st.isSymlink);
    assert.equal(st.ino, (await Deno.stat(realView)).ino);
    assert.equal(await Deno.readTextFile(join(real, "file.txt")), expected);
    // Nothing else in the whole sandbox changed.
    assertOnlyChanged(
      before,
      await snapshot(p),
      new Set([...stateSet(p.root), join(real, "file.txt"), decoy]),
      "after the race",
    );
    await assertCliLedgerVerifies(p);
    assert.deepEqual(leftovers, [], "temporary files were left in the real directory");
  } finally {
    if (swapper !== null) await swapper.stop().catch(() => 0);
    try {
      pin.kill("SIGKILL");
    } catch { /* gone */ }
    await pin.status;
    await p.dispose();
  }
}

Deno.test("race: src/sub swapped with a symlink to a directory outside the project", async () => {
  await race("race-outside", (p) => p.outside);
});

Deno.test("race: src/sub swapped with a symlink to .git/hooks", async () => {
  await race("race-hooks", (p) => join(p.root, ".git/hooks"));
});
