/**
 * The ledger and the dispatch store are shared: while a command runs, other `agentteams`
 * processes append to them. These tests run real commands (in process, unconfined, so nothing
 * but the checks stands between the command and `.agentteams/`) and real concurrent CLI calls:
 *
 * - another dispatch issued and another run completed while a command sleeps: the command's run
 *   completes normally, nothing is reported as its write, and the ledger verifies;
 * - a command that appends a row it cannot sign, flips one byte of the ledger's last row in place
 *   (same size, mtime restored, inode kept), or removes a `use` row from the dispatch store
 *   (getting a use back): `LEDGER_TAMPERED`, and the start row is left without a completion row;
 * - a command that flips one byte deep in the history (the first row) in place: the act checks
 *   only the tail it appends to, so its run completes, and `ledger verify` names the row;
 * - a command that leaves files named like a key holder's temporary files (which the check lets
 *   pass only once they are gone): reported as undeclared writes like any other.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { LedgerError, UndeclaredWritesError } from "../../lib/errors.ts";
import type { RunRequestResult } from "../../lib/requests/request.ts";
import {
  exists,
  q,
  readDispatchStore,
  readRows,
  type Row,
  runUnconfinedInProcess,
  shScript,
  sleep,
  withWorld,
  workerBrief,
  type WorldPaths,
} from "./_run_helpers.ts";

const LEDGER = ".agentteams/proposal-ledger.jsonl";
const STORE = ".agentteams/dispatches.jsonl";
/** Names a key holder's atomic rewrite of the head and of the dispatch store uses, left behind. */
const TEMP_NAMES = [
  ".agentteams/.dispatches.jsonl.fedcba9876543210.tmp",
  ".agentteams/.proposal-ledger.head.0123456789abcdef.tmp",
];

const SCRIPTS = {
  // Says it started, then waits (at most a minute) until the test has made its concurrent calls.
  "wait-a-while": (p: WorldPaths) =>
    shScript(
      [
        `touch ${q(join(p.scratch, "started"))}`,
        "i=0",
        `while [ ! -e ${q(join(p.scratch, "go"))} ] && [ "$i" -lt 1200 ]; do`,
        "  sleep 0.05; i=$((i+1))",
        "done",
      ].join("\n"),
    ),
  // A row shaped like the real ones, with a MAC the command cannot compute.
  "forge-row": shScript(
    `printf '%s\\n' '{"action":"run-request","agent":"worker","mac":"${
      "0".repeat(64)
    }","prev":"x","time":"2026-01-01T00:00:00+00:00"}' >> ${LEDGER}`,
  ),
  // One byte of the first row changed where it lies (dd conv=notrunc keeps the inode and size);
  // then the mtime is put back.
  "flip-byte": shScript(
    [
      "ref=$(mktemp)",
      `touch -r ${LEDGER} "$ref"`,
      `printf 'X' | dd of=${LEDGER} bs=1 seek=2 conv=notrunc 2>/dev/null`,
      `touch -r "$ref" ${LEDGER}`,
      'rm -f "$ref"',
    ].join("\n"),
  ),
  // The same in the last row (the run's own start row, which the act found last).
  "flip-last": shScript(
    [
      "ref=$(mktemp)",
      `touch -r ${LEDGER} "$ref"`,
      `size=$(wc -c < ${LEDGER}); last=$(tail -n 1 ${LEDGER} | wc -c)`,
      `printf 'X' | dd of=${LEDGER} bs=1 seek=$((size - last + 2)) conv=notrunc 2>/dev/null`,
      `touch -r "$ref" ${LEDGER}`,
      'rm -f "$ref"',
    ].join("\n"),
  ),
  // The last `use` row dropped, in place: one use of a live dispatch given back.
  "drop-use": shScript(
    [
      `n=$(grep -n '"use"' ${STORE} | tail -1 | cut -d: -f1)`,
      "kept=$(mktemp)",
      `sed "\${n}d" ${STORE} > "$kept"`,
      `cat "$kept" > ${STORE}`,
      'rm -f "$kept"',
    ].join("\n"),
  ),
  // Files under the names of a key holder's temporary files, kept.
  "leave-temp-names": shScript(TEMP_NAMES.map((n) => `echo forged > ${n}`).join("\n")),
} as const;

type ScriptName = keyof typeof SCRIPTS;

function brief(p: WorldPaths) {
  return workerBrief(
    p,
    [
      ...Object.keys(SCRIPTS).map((n) => ({ prefix: [join(p.scripts, n)] })),
      { prefix: ["true"] },
    ],
    { top: { allow_unconfined_runs: true } },
  );
}

const WORLD = { brief, scripts: SCRIPTS as Record<string, string | ((p: WorldPaths) => string)> };

function runs(rows: Row[]): string[] {
  return rows.map((r) => String(r.action)).filter((a) => a.startsWith("run-request"));
}

Deno.test("shared stores: a dispatch and another run completing during a command are not its writes", async () => {
  await withWorld("stores-concurrent", WORLD, async (w) => {
    const long = runUnconfinedInProcess(w, {
      argv: [join(w.scripts, "wait-a-while")],
      purpose: "long",
    });
    // Once it runs: a dispatch (the store is compacted and rewritten, a ledger row added) and a
    // whole run of `true` (attempt and use rows, start and completion rows, head rewrites).
    const started = join(w.scratch, "started");
    for (let i = 0; i < 1200 && !exists(started); i++) await sleep(50);
    assert.ok(exists(started), "the command started");
    const other = await w.dispatch();
    const quick = await w.run({ argv: ["true"] }, { nonce: other, flags: ["--unconfined"] });
    assert.equal(quick.code, 0, quick.stderr);
    Deno.writeTextFileSync(join(w.scratch, "go"), "");
    const out = await long;
    assert.equal(out.error, undefined, String(out.error));
    assert.equal(out.result?.exit, 0);
    assert.deepEqual(out.result?.undeclared_writes, []);
    const added = readRows(w.project).slice(out.rowsBefore);
    // Its start row, the other run's rows, the other dispatch's row, then its completion.
    assert.deepEqual(runs(added), [
      "run-request-start",
      "run-request-start",
      "run-request",
      "run-request",
    ]);
    assert.equal(added.filter((r) => r.action === "issue-dispatch").length, 1);
    const mine = added.filter((r) => r.action === "run-request").at(-1);
    assert.deepEqual(mine?.argv, [join(w.scripts, "wait-a-while")]);
    assert.deepEqual(mine?.undeclared_writes, []);
    await w.verifyOk();
  });
});

async function assertTampered(name: ScriptName, why: RegExp): Promise<void> {
  await withWorld(`stores-${name}`, WORLD, async (w) => {
    const usesBefore = readDispatchStore(w.project).filter((r) => "use" in r).length;
    const out = await runUnconfinedInProcess(w, {
      argv: [join(w.scripts, name)],
      purpose: name,
    });
    assert.ok(out.error instanceof LedgerError, `LedgerError expected, got ${out.error}`);
    assert.equal(out.error.code, "LEDGER_TAMPERED");
    assert.match(out.error.message, why);
    // Nothing more was recorded: the start row is the last row written (after it, only what the
    // command forged), and no completion row exists.
    const rows = readRows(w.project);
    assert.equal(rows.length, out.rowsBefore + 1 + (name === "forge-row" ? 1 : 0));
    // (flip-last turned the start row's `action` key into `Xction`.)
    const start = rows[out.rowsBefore];
    assert.equal(name === "flip-last" ? start.Xction : start.action, "run-request-start");
    assert.deepEqual(rows[out.rowsBefore].argv, [join(w.scripts, name)]);
    assert.deepEqual(
      rows.slice(out.rowsBefore + 1).map((r) => r.mac),
      name === "forge-row" ? ["0".repeat(64)] : [],
    );
    if (name === "drop-use") {
      const uses = readDispatchStore(w.project).filter((r) => "use" in r).length;
      assert.equal(uses, usesBefore, "the use it spent was dropped by the command, not restored");
    }
    // The operator's tool sees it too.
    if (name !== "drop-use") {
      const v = await w.cli(["ledger", "verify", "--project", w.project, "--json"]);
      assert.equal(v.code, 1, v.stdout + v.stderr);
    }
  });
}

Deno.test("shared stores: a row appended without the key is LEDGER_TAMPERED", async () => {
  await assertTampered("forge-row", /does not match its head|added row 1 does not verify/);
});

Deno.test("shared stores: one byte of the last row flipped in place, size and mtime kept, is LEDGER_TAMPERED", async () => {
  await assertTampered(
    "flip-last",
    /last row does not match its head|rows already written were changed/,
  );
});

Deno.test("shared stores: one byte flipped deep in the history is not the act's to find; `ledger verify` names it", async () => {
  await withWorld("stores-flip-byte", WORLD, async (w) => {
    const out = await runUnconfinedInProcess(w, {
      argv: [join(w.scripts, "flip-byte")],
      purpose: "flip-byte",
    });
    assert.equal(out.error, undefined, String(out.error));
    assert.equal(out.result?.exit, 0);
    const added = readRows(w.project).slice(out.rowsBefore);
    assert.deepEqual(runs(added), ["run-request-start", "run-request"]);
    const v = await w.cli(["ledger", "verify", "--project", w.project, "--json"]);
    assert.equal(v.code, 1, v.stdout + v.stderr);
    const report = JSON.parse(v.stdout) as { problems: { code: string; row: number | null }[] };
    assert.deepEqual(report.problems.map((p) => [p.code, p.row]), [["ROW_MAC_INVALID", 1]]);
  });
});

Deno.test("shared stores: a use row removed from the dispatch store is LEDGER_TAMPERED", async () => {
  await assertTampered("drop-use", /a row of a live dispatch was removed/);
});

Deno.test("shared stores: files left under a key holder's temporary names are undeclared writes", async () => {
  await withWorld("stores-temp-names", WORLD, async (w) => {
    const out = await runUnconfinedInProcess(w, {
      argv: [join(w.scripts, "leave-temp-names")],
      purpose: "temp names",
    });
    assert.ok(out.error instanceof UndeclaredWritesError, `exit 3 expected, got ${out.error}`);
    assert.equal(out.error.code, "UNDECLARED_WRITES");
    const result = (out.error as unknown as { result: RunRequestResult }).result;
    assert.equal(result.exit, 0, result.stderr);
    assert.deepEqual(result.undeclared_writes, TEMP_NAMES);
    for (const n of TEMP_NAMES) assert.ok(exists(join(w.project, n)), `the scenario held: ${n}`);
    const added = readRows(w.project).slice(out.rowsBefore);
    assert.deepEqual(runs(added), ["run-request-start", "run-request"]);
    assert.deepEqual(added.at(-1)?.undeclared_writes, TEMP_NAMES);
    await w.verifyOk();
  });
});
