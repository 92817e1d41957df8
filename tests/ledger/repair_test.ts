/**
 * `ledger repair --torn-tail`: removes only the unterminated fragment, records a `ledger-repair`
 * row, and the ledger verifies after; refuses (NO_TORN_TAIL) on an intact ledger and
 * (LEDGER_TAMPERED) when anything else is wrong, writing nothing. In process and via the CLI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendRow } from "../../lib/ledger/append.ts";
import { repairTornTail } from "../../lib/ledger/repair.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import { LedgerError } from "../../lib/errors.ts";
import {
  headFor,
  joinLines,
  runCli,
  type Sandbox,
  sha256,
  snapshotTree,
  stateFiles,
  utf8,
} from "../_helpers/mod.ts";
import {
  copyFixture,
  FIXTURE_KEY,
  FIXTURE_KEY_TEXT,
  FIXTURE_NOW,
  refuses,
  withSandbox,
} from "./_fixture.ts";
import { assertCliRefused, assertRefusal, assertSameTree } from "../_helpers/assert.ts";

const FRAGMENT = '{"action": "note", "n": 7, "text": "interrupt';

function cliEnv(sb: Sandbox): Record<string, string> {
  return { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: FIXTURE_KEY_TEXT };
}

Deno.test("repairTornTail removes only the fragment, records the repair, and the ledger verifies", async () => {
  await withSandbox("repair", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const intact = joinLines(f.lines);
    await Deno.writeTextFile(p.ledger, intact + FRAGMENT);
    assert.deepEqual(
      verifyLedgerAt(sb.project, FIXTURE_KEY).problems.map((x) => x.code),
      ["TORN_TAIL"],
    );
    const r = await repairTornTail(sb.project, FIXTURE_KEY, { now: () => FIXTURE_NOW });
    assert.equal(r.removedBytes, utf8(FRAGMENT).length);
    assert.equal(r.fragmentSha256, sha256(FRAGMENT));
    assert.equal(r.row.count, 7);
    const after = await Deno.readTextFile(p.ledger);
    // Everything before the fragment is byte-identical; one row follows.
    assert.ok(after.startsWith(intact));
    const added = after.slice(intact.length).split("\n");
    assert.equal(added.length, 2);
    assert.equal(added[1], "");
    const row = JSON.parse(added[0]);
    assert.equal(row.action, "ledger-repair");
    assert.equal(row.repair, "torn-tail");
    assert.equal(row.removed_bytes, utf8(FRAGMENT).length);
    assert.equal(row.fragment_sha256, sha256(FRAGMENT));
    assert.equal(row.prev, sha256(f.lines[5]));
    const v = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.equal(v.ok, true);
    assert.equal(v.rows, 7);
    // Appends work again.
    assert.equal((await appendRow(sb.project, FIXTURE_KEY.hmac, { action: "after" })).count, 8);
    assert.equal(verifyLedgerAt(sb.project, FIXTURE_KEY).ok, true);
  });
});

Deno.test("repairTornTail with the head one row behind: repairs, heals, verifies", async () => {
  await withSandbox("repair-lag", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    await Deno.writeTextFile(p.ledger, joinLines(f.lines) + FRAGMENT);
    await Deno.writeTextFile(p.head, headFor(f.lines.slice(0, 5), FIXTURE_KEY.hmac));
    const v = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.deepEqual(v.problems.map((x) => x.code), ["TORN_TAIL"]);
    assert.equal(v.notes.length, 1);
    const r = await repairTornTail(sb.project, FIXTURE_KEY);
    assert.equal(r.row.count, 7);
    assert.equal(r.row.healedHead, true);
    const after = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.equal(after.ok, true);
    assert.deepEqual(after.notes, []);
  });
});

Deno.test("a complete signed last row without its newline (head at it or one behind): verify names it, repair keeps it by restoring the newline, and the ledger verifies", async (t) => {
  for (const headRows of [5, 4]) {
    await t.step(`head for ${headRows} of 6 rows`, () =>
      withSandbox("repair-keep", async (sb) => {
        const f = await copyFixture(sb.project);
        const p = stateFiles(sb.project);
        // Row 6 lost only its newline: a crash after all but the last byte, or someone who
        // removed the newline and put back an older head to have repair throw the row away.
        const kept = joinLines(f.lines).slice(0, -1);
        await Deno.writeTextFile(p.ledger, kept);
        await Deno.writeTextFile(p.head, headFor(f.lines.slice(0, headRows), FIXTURE_KEY.hmac));
        const v = verifyLedgerAt(sb.project, FIXTURE_KEY);
        assert.deepEqual(v.problems.map((x) => x.code), ["TORN_TAIL"]);
        assert.match(v.problems[0].message, /complete signed row .* restores the newline/);
        assert.equal(v.tail?.complete, true);
        const r = await repairTornTail(sb.project, FIXTURE_KEY, { now: () => FIXTURE_NOW });
        assert.equal(r.restoredNewline, true);
        assert.equal(r.removedBytes, 0);
        assert.equal(r.fragmentSha256, sha256(f.lines[5]));
        assert.equal(r.row.count, 7);
        const after = await Deno.readTextFile(p.ledger);
        // Every row is kept byte for byte; the repair row follows.
        assert.ok(after.startsWith(joinLines(f.lines)), "the signed row was not kept");
        const row = JSON.parse(after.slice(joinLines(f.lines).length).trimEnd());
        assert.equal(row.action, "ledger-repair");
        assert.equal(row.repair, "newline-restored");
        assert.equal(row.row_sha256, sha256(f.lines[5]));
        assert.equal(row.prev, sha256(f.lines[5]));
        const ok = verifyLedgerAt(sb.project, FIXTURE_KEY);
        assert.equal(ok.ok, true, JSON.stringify(ok.problems));
        assert.equal(ok.rows, 7);
        assert.deepEqual(ok.notes, []);
        assert.equal((await appendRow(sb.project, FIXTURE_KEY.hmac, { action: "after" })).count, 8);
      }));
  }
});

Deno.test("a signed row copied to the end without its newline (chaining elsewhere): ROWS_REORDERED, not a torn tail; repair refuses and writes nothing", async () => {
  await withSandbox("repair-stray", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    await Deno.writeTextFile(p.ledger, joinLines(f.lines) + f.lines[2]);
    const v = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.deepEqual(v.problems.map((x) => x.code), ["ROWS_REORDERED"]);
    assert.equal(v.problems[0].row, 7);
    await refuses(
      sb,
      () => repairTornTail(sb.project, FIXTURE_KEY),
      "LEDGER_TAMPERED",
      LedgerError,
    );
  });
});

Deno.test("repairTornTail refuses NO_TORN_TAIL on an intact ledger (also with a lagging head), writing nothing", async () => {
  await withSandbox("repair-none", async (sb) => {
    const f = await copyFixture(sb.project);
    let before = await snapshotTree(sb.dir);
    await assertRefusal(() => repairTornTail(sb.project, FIXTURE_KEY), "NO_TORN_TAIL", LedgerError);
    assertSameTree(before, await snapshotTree(sb.dir));
    await Deno.writeTextFile(
      stateFiles(sb.project).head,
      headFor(f.lines.slice(0, 5), FIXTURE_KEY.hmac),
    );
    before = await snapshotTree(sb.dir);
    await assertRefusal(() => repairTornTail(sb.project, FIXTURE_KEY), "NO_TORN_TAIL", LedgerError);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("repairTornTail on a project with no ledger: NO_TORN_TAIL, nothing created", async () => {
  await withSandbox("repair-fresh", async (sb) => {
    await refuses(sb, () => repairTornTail(sb.project, FIXTURE_KEY), "NO_TORN_TAIL", LedgerError);
  });
});

Deno.test("repairTornTail refuses LEDGER_TAMPERED when anything besides the fragment is wrong, writing nothing", async (t) => {
  const cases: [string, (p: ReturnType<typeof stateFiles>, l: string[]) => Promise<void>][] = [
    [
      "a torn tail after an edited row",
      (p, l) =>
        Deno.writeTextFile(
          p.ledger,
          joinLines([...l.slice(0, 2), l[2].replace("row 3", "row X"), ...l.slice(3)]) + FRAGMENT,
        ),
    ],
    [
      "a torn tail after a removed row",
      (p, l) =>
        Deno.writeTextFile(p.ledger, joinLines([...l.slice(0, 2), ...l.slice(3)]) + FRAGMENT),
    ],
    [
      "a cut mid-row with rows missing (TRUNCATED)",
      (p, l) => Deno.writeTextFile(p.ledger, joinLines(l.slice(0, 3)) + l[3].slice(0, 30)),
    ],
    [
      "a torn tail with the head missing",
      async (p, l) => {
        await Deno.writeTextFile(p.ledger, joinLines(l) + FRAGMENT);
        await Deno.remove(p.head);
      },
    ],
    [
      "a torn tail with an edited dispatch store",
      async (p, l) => {
        await Deno.writeTextFile(p.ledger, joinLines(l) + FRAGMENT);
        const d = await Deno.readTextFile(p.dispatches);
        await Deno.writeTextFile(p.dispatches, d.replace('"worker"', '"admin"'));
      },
    ],
    [
      "no torn tail but a removed last row",
      (p, l) => Deno.writeTextFile(p.ledger, joinLines(l.slice(0, 5))),
    ],
  ];
  for (const [name, damage] of cases) {
    await t.step(name, () =>
      withSandbox("repair-tampered", async (sb) => {
        const f = await copyFixture(sb.project);
        await damage(stateFiles(sb.project), f.lines);
        await refuses(
          sb,
          () => repairTornTail(sb.project, FIXTURE_KEY),
          "LEDGER_TAMPERED",
          LedgerError,
        );
      }));
  }
});

Deno.test("repairTornTail through a symlinked .agentteams whose target has no ledger: refused, nothing created in the target", async () => {
  await withSandbox("repair-symlink", async (sb) => {
    const target = join(sb.dir, "elsewhere", ".agentteams");
    await Deno.mkdir(target, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(join(target, "dispatches.jsonl"), "");
    await Deno.symlink(target, join(sb.project, ".agentteams"));
    await refuses(
      sb,
      () => repairTornTail(sb.project, FIXTURE_KEY),
      "LEDGER_UNSAFE_PATH",
      LedgerError,
    );
  });
});

Deno.test("CLI ledger repair --torn-tail: repairs, then verify passes; refusals exit 1 and write nothing", async () => {
  await withSandbox("repair-cli", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const env = cliEnv(sb);
    const args = ["ledger", "repair", "--torn-tail", "--project", sb.project];

    // Intact: NO_TORN_TAIL.
    let before = await snapshotTree(sb.dir);
    assertCliRefused(await runCli(args, { env }), "ledger repair", "NO_TORN_TAIL");
    assertSameTree(before, await snapshotTree(sb.dir));

    // Without --torn-tail: a usage error.
    await Deno.writeTextFile(p.ledger, joinLines(f.lines) + FRAGMENT);
    before = await snapshotTree(sb.dir);
    assertCliRefused(
      await runCli(["ledger", "repair", "--project", sb.project], { env }),
      "ledger repair",
      "USAGE",
      2,
    );
    assertSameTree(before, await snapshotTree(sb.dir));

    // Torn: repaired, and `ledger verify` passes.
    const verifyArgs = ["ledger", "verify", "--project", sb.project];
    assertCliRefused(await runCli(verifyArgs, { env }), "ledger verify", "TORN_TAIL");
    const r = await runCli([...args, "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.ok, true);
    assert.equal(out.removed_bytes, utf8(FRAGMENT).length);
    assert.equal(out.fragment_sha256, sha256(FRAGMENT));
    const v = await runCli(verifyArgs, { env });
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /^ok: 7 rows verify$/m);

    // Torn after other damage: LEDGER_TAMPERED.
    const now = (await Deno.readTextFile(p.ledger)).split("\n").slice(0, -1);
    await Deno.writeTextFile(
      p.ledger,
      joinLines([now[0], now[1].replace("row 2", "row X"), ...now.slice(2)]) + FRAGMENT,
    );
    before = await snapshotTree(sb.dir);
    assertCliRefused(await runCli(args, { env }), "ledger repair", "LEDGER_TAMPERED");
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});
