/**
 * Appending: the row and head formats (checked independently with node:crypto), the head left one
 * row behind by a crash (verifies with a note, healed by the next append), every refusal of an
 * append (torn tail, any tail/head mismatch, unsafe paths, invalid bodies) writing nothing, and
 * write-ahead recording.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendRow } from "../../lib/ledger/append.ts";
import { issueDispatch, resolveDispatch } from "../../lib/ledger/dispatch.ts";
import { repairTornTail } from "../../lib/ledger/repair.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import { writeAhead } from "../../lib/ledger/write_ahead.ts";
import { LedgerError } from "../../lib/errors.ts";
import { canonical } from "../../lib/pycompat/canonical.ts";
import { MAX_ROW_BYTES, type RowBody } from "../../lib/ledger/row.ts";
import {
  buildLedger,
  copyTree,
  headFor,
  hmacHex,
  joinLines,
  keyOf,
  pyDumps,
  runCli,
  type Sandbox,
  sha256,
  snapshotTree,
  stateFiles,
  utf8,
  writeBrief,
  writeState,
} from "../_helpers/mod.ts";
import { copyFixture, FIXTURE_KEY, FIXTURE_KEY_TEXT, refuses, withSandbox } from "./_fixture.ts";
import { assertCliRefused, assertRefusal, assertSameTree } from "../_helpers/assert.ts";

const KEY_TEXT = "append-key";
const KEY = keyOf(KEY_TEXT);
const T0 = new Date(Date.UTC(2026, 10, 29, 18, 2, 10, 999));

async function lines(path: string): Promise<string[]> {
  return (await Deno.readTextFile(path)).split("\n").slice(0, -1);
}

/**
 * Runs `fn` with the next `n` renames failing: the on-disk state afterwards is the state a crash
 * just before those renames leaves (the head is written by temp file + rename, the row is not).
 */
async function crashAtRename<T>(n: number, fn: () => Promise<T>): Promise<T | Error> {
  const d = Deno as unknown as { renameSync: typeof Deno.renameSync };
  const original = d.renameSync;
  let left = n;
  d.renameSync = (from, to) => {
    if (left-- > 0) throw new Error("simulated crash before rename");
    return original(from, to);
  };
  try {
    return await fn();
  } catch (e) {
    return e as Error;
  } finally {
    d.renameSync = original;
  }
}

Deno.test("appendRow: rows and head in the earlier tool's format (independent re-check)", async () => {
  await withSandbox("append-format", async (sb) => {
    const bodies: RowBody[] = [
      { action: "note", agent: "w", text: "caf\u00e9 \u{1f600}" },
      { action: "note", list: [1, "two", null, true], nested: { z: 1, a: [] } },
      { action: "note" },
    ];
    for (let i = 0; i < bodies.length; i++) {
      const r = await appendRow(sb.project, KEY.hmac, bodies[i], { now: () => T0 });
      assert.equal(r.count, i + 1);
      assert.equal(r.hash, sha256(r.line));
      assert.equal(r.healedHead, false);
    }
    const p = stateFiles(sb.project);
    const got = await lines(p.ledger);
    assert.equal(got.length, 3);
    let prev = "";
    got.forEach((line, i) => {
      const row = JSON.parse(line) as Record<string, unknown>;
      assert.equal(row.prev, prev);
      assert.equal(row.time, "2026-11-29T18:02:10+00:00");
      const { mac, ...signed } = row;
      assert.deepEqual(signed, { ...bodies[i], time: row.time, prev });
      assert.equal(mac, hmacHex(KEY_TEXT, pyDumps(signed)));
      assert.equal(line, pyDumps(row));
      prev = sha256(line);
    });
    const head = await Deno.readTextFile(p.head);
    const last = sha256(got[2]);
    const headMac = hmacHex(KEY_TEXT, `{"count": 3, "last": "${last}"}`);
    assert.equal(head, `{"count": 3, "last": "${last}", "mac": "${headMac}"}\n`);
    assert.equal((await Deno.stat(p.dir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(p.ledger)).mode! & 0o077, 0);
    assert.equal(verifyLedgerAt(sb.project, KEY).ok, true);
  });
});

Deno.test("appendRow keeps the head file's mode across rewrites", async () => {
  await withSandbox("append-mode", async (sb) => {
    await appendRow(sb.project, KEY.hmac, { action: "a" });
    const p = stateFiles(sb.project);
    await Deno.chmod(p.head, 0o640);
    await appendRow(sb.project, KEY.hmac, { action: "b" });
    assert.equal((await Deno.stat(p.head)).mode! & 0o777, 0o640);
    // No temp files are left behind.
    const names = [];
    for await (const e of Deno.readDir(p.dir)) names.push(e.name);
    assert.deepEqual(names.sort(), [
      "anchors.json",
      "proposal-ledger.head",
      "proposal-ledger.jsonl",
    ]);
  });
});

Deno.test("a head one row behind (crash between row fsync and head rename): ok with a note, healed by the next append", async () => {
  await withSandbox("append-lag", async (sb) => {
    for (let i = 0; i < 3; i++) await appendRow(sb.project, KEY.hmac, { action: "n", i });
    const p = stateFiles(sb.project);
    const oldHead = await Deno.readTextFile(p.head);
    await appendRow(sb.project, KEY.hmac, { action: "n", i: 3 });
    await Deno.writeTextFile(p.head, oldHead); // the rename never happened

    const r = verifyLedgerAt(sb.project, KEY);
    assert.equal(r.ok, true);
    assert.equal(r.rows, 4);
    assert.equal(r.notes.length, 1);
    assert.match(r.notes[0], /one row behind/);

    const cli = await runCli(["ledger", "verify", "--project", sb.project], {
      env: { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: KEY_TEXT },
    });
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^ok: 4 rows verify$/m);
    assert.match(cli.stdout, /^note: the head is one row behind/m);

    const healed = await appendRow(sb.project, KEY.hmac, { action: "n", i: 4 });
    assert.equal(healed.healedHead, true);
    assert.equal(healed.count, 5);
    const after = verifyLedgerAt(sb.project, KEY);
    assert.equal(after.ok, true);
    assert.equal(after.rows, 5);
    assert.deepEqual(after.notes, []);
    assert.equal(JSON.parse(await Deno.readTextFile(p.head)).count, 5);
  });
});

Deno.test("a crash inside the very first append (before the head's first rename): ok, and the next append works", async () => {
  await withSandbox("append-first-crash", async (sb) => {
    const crashed = await crashAtRename(
      1,
      () => appendRow(sb.project, KEY.hmac, { action: "note", i: 0 }),
    );
    assert.ok(crashed instanceof Error);
    const r = verifyLedgerAt(sb.project, KEY);
    assert.deepEqual(r.problems, [], "an interrupted first append must not look like tampering");
    assert.equal(r.ok, true);
    const next = await appendRow(sb.project, KEY.hmac, { action: "note", i: 1 });
    assert.ok(next.count >= 1);
    const after = verifyLedgerAt(sb.project, KEY);
    assert.equal(after.ok, true);
    assert.deepEqual(after.notes, []);
    // More than one row without a head is not a crash: that stays HEAD_MISSING.
    const two = buildLedger([{ action: "a" }, { action: "b" }], KEY.hmac);
    await writeState(sb.project, { ledger: two.text, head: null });
    assert.deepEqual(verifyLedgerAt(sb.project, KEY).problems.map((p) => p.code), [
      "HEAD_MISSING",
    ]);
  });
});

Deno.test("a crash between a row's fsync and its head's rename, twice in a row, still leaves a state that verifies", async () => {
  await withSandbox("append-double-crash", async (sb) => {
    for (let i = 0; i < 3; i++) await appendRow(sb.project, KEY.hmac, { action: "n", i });
    // First crash: the row is written, the head is not renamed.
    const first = await crashAtRename(
      1,
      () => appendRow(sb.project, KEY.hmac, { action: "n", i: 3 }),
    );
    assert.ok(first instanceof Error);
    let r = verifyLedgerAt(sb.project, KEY);
    assert.deepEqual(r.problems, []);
    assert.equal(r.notes.length, 1);
    // Second crash, during the append that would heal the head.
    const second = await crashAtRename(
      1,
      () => appendRow(sb.project, KEY.hmac, { action: "n", i: 4 }),
    );
    assert.ok(second instanceof Error);
    r = verifyLedgerAt(sb.project, KEY);
    assert.deepEqual(r.problems, [], "two interrupted appends must not look like tampering");
    // And the ledger is usable again.
    const next = await appendRow(sb.project, KEY.hmac, { action: "n", i: 5 });
    assert.ok(next.count >= 5);
    r = verifyLedgerAt(sb.project, KEY);
    assert.equal(r.ok, true);
    assert.deepEqual(r.notes, []);
  });
});

Deno.test("a head one row behind an edited (or unchained) last row is not a crash: refused", async () => {
  await withSandbox("append-lag-bad", async (sb) => {
    for (let i = 0; i < 3; i++) await appendRow(sb.project, KEY.hmac, { action: "n", i });
    const p = stateFiles(sb.project);
    const oldHead = await Deno.readTextFile(p.head);
    await appendRow(sb.project, KEY.hmac, { action: "n", i: 3 });
    await Deno.writeTextFile(p.head, oldHead);
    const ls = await lines(p.ledger);
    // The last row re-signed with another key: its MAC fails.
    const forged = buildLedger([{ action: "n", i: 99 }], keyOf("other").hmac).lines[0];
    await Deno.writeTextFile(p.ledger, joinLines([...ls.slice(0, 3), forged]));
    assert.equal(verifyLedgerAt(sb.project, KEY).ok, false);
    await refuses(
      sb,
      () => appendRow(sb.project, KEY.hmac, { action: "x" }),
      "LEDGER_TAMPERED",
      LedgerError,
    );
    // A head two rows behind is not a crash either.
    const two = buildLedger([0, 1, 2, 3, 4].map((i) => ({ action: "n", i })), KEY.hmac);
    await writeState(sb.project, {
      ledger: two.text,
      head: headFor(two.lines.slice(0, 3), KEY.hmac),
    });
    assert.equal(verifyLedgerAt(sb.project, KEY).ok, false);
    await refuses(
      sb,
      () => appendRow(sb.project, KEY.hmac, { action: "x" }),
      "LEDGER_TAMPERED",
      LedgerError,
    );
  });
});

/** Damage applied to a copy of the fixture; an append must refuse with `code`, writing nothing. */
const REFUSALS: {
  name: string;
  code: string;
  damage: (p: ReturnType<typeof stateFiles>, l: string[]) => Promise<void>;
}[] = [
  {
    name: "a torn tail",
    code: "TORN_TAIL",
    damage: (p, l) => Deno.writeTextFile(p.ledger, joinLines(l) + '{"action": "no'),
  },
  {
    name: "a torn tail after a lagging head",
    code: "TORN_TAIL",
    damage: async (p, l) => {
      await Deno.writeTextFile(p.ledger, joinLines(l) + '{"action": "no');
      await Deno.writeTextFile(p.head, headFor(l.slice(0, 5), FIXTURE_KEY.hmac));
    },
  },
  { name: "the head missing", code: "LEDGER_TAMPERED", damage: (p) => Deno.remove(p.head) },
  {
    name: "the head's MAC edited",
    code: "LEDGER_TAMPERED",
    damage: async (p) => {
      const h = JSON.parse(await Deno.readTextFile(p.head));
      h.count += 1;
      await Deno.writeTextFile(p.head, canonical(h) + "\n");
    },
  },
  {
    name: "the head malformed",
    code: "LEDGER_TAMPERED",
    damage: (p) => Deno.writeTextFile(p.head, "[]\n"),
  },
  {
    name: "a head from another ledger",
    code: "LEDGER_TAMPERED",
    damage: (p) =>
      Deno.writeTextFile(
        p.head,
        buildLedger([1, 2, 3, 4, 5, 6].map((n) => ({ n })), FIXTURE_KEY.hmac).head,
      ),
  },
  {
    name: "the last row removed",
    code: "LEDGER_TAMPERED",
    damage: (p, l) => Deno.writeTextFile(p.ledger, joinLines(l.slice(0, 5))),
  },
  {
    name: "the last row edited",
    code: "LEDGER_TAMPERED",
    damage: (p, l) =>
      Deno.writeTextFile(p.ledger, joinLines([...l.slice(0, 5), l[5].replace("row 6", "row X")])),
  },
  {
    name: "the file emptied, head kept",
    code: "LEDGER_TAMPERED",
    damage: (p) => Deno.writeTextFile(p.ledger, ""),
  },
  {
    name: "ledger and head signed with another key",
    code: "LEDGER_TAMPERED",
    damage: async (p) => {
      const b = buildLedger([{ action: "n" }], keyOf("other").hmac);
      await Deno.writeTextFile(p.ledger, b.text);
      await Deno.writeTextFile(p.head, b.head);
    },
  },
  {
    name: "the ledger missing, head kept",
    code: "LEDGER_TAMPERED",
    damage: (p) => Deno.remove(p.ledger),
  },
  {
    name: "the ledger and head missing while the dispatch store has rows",
    code: "LEDGER_TAMPERED",
    damage: async (p) => {
      await Deno.remove(p.ledger);
      await Deno.remove(p.head);
    },
  },
];

Deno.test("appendRow refuses on a torn tail or any tail/head mismatch, writing nothing", async (t) => {
  for (const c of REFUSALS) {
    await t.step(c.name, () =>
      withSandbox("append-refuse", async (sb) => {
        const f = await copyFixture(sb.project);
        await c.damage(stateFiles(sb.project), f.lines);
        const before = await snapshotTree(sb.dir);
        await assertRefusal(
          () => appendRow(sb.project, FIXTURE_KEY.hmac, { action: "note" }),
          c.code,
          LedgerError,
        );
        assertSameTree(before, await snapshotTree(sb.dir), "after appendRow");
        // issueDispatch records a ledger row: it must refuse too, leaving the store alone.
        await assertRefusal(
          () => issueDispatch(sb.project, FIXTURE_KEY.hmac, "worker"),
          c.code,
          LedgerError,
        );
        assertSameTree(before, await snapshotTree(sb.dir), "after issueDispatch");
      }));
  }
});

Deno.test("CLI dispatch refuses on a damaged ledger (exit 1), writing nothing", async () => {
  await withSandbox("append-cli-refuse", async (sb) => {
    const f = await copyFixture(sb.project);
    await Deno.writeTextFile(stateFiles(sb.project).ledger, joinLines(f.lines.slice(0, 5)));
    writeBrief(sb.project);
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["dispatch", "--agent", "worker", "--project", sb.project], {
      env: { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: FIXTURE_KEY_TEXT },
    });
    assertCliRefused(r, "dispatch", "LEDGER_TAMPERED");
    assert.equal(r.stdout, "");
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("appendRow refuses invalid bodies (ROW_INVALID) and oversized rows, writing nothing", async () => {
  await withSandbox("append-invalid", async (sb) => {
    await copyFixture(sb.project);
    const bad: RowBody[] = [
      { action: "x", mac: "00" },
      { action: "x", prev: "" },
      { action: "x", time: "now" },
      { action: "x", n: 1.5 },
      { action: "x", s: "\ud800" },
      { action: "x", big: 2 ** 53 },
    ];
    const before = await snapshotTree(sb.dir);
    for (const body of bad) {
      await assertRefusal(
        () => appendRow(sb.project, FIXTURE_KEY.hmac, body),
        "ROW_INVALID",
        LedgerError,
      );
    }
    await assertRefusal(
      () => appendRow(sb.project, FIXTURE_KEY.hmac, { action: "x", text: "y".repeat(1024 * 1024) }),
      "LEDGER_ROW_TOO_LARGE",
      LedgerError,
    );
    assertSameTree(before, await snapshotTree(sb.dir));
    assert.equal(verifyLedgerAt(sb.project, FIXTURE_KEY).ok, true);
  });
});

Deno.test("an invalid or oversized body on a fresh project creates nothing (no state dir, no empty ledger)", async () => {
  await withSandbox("append-invalid-fresh", async (sb) => {
    await refuses(
      sb,
      () => appendRow(sb.project, KEY.hmac, { action: "x", n: 0.5 }),
      "ROW_INVALID",
      LedgerError,
    );
    await refuses(
      sb,
      () => appendRow(sb.project, KEY.hmac, { action: "x", text: "y".repeat(1024 * 1024) }),
      "LEDGER_ROW_TOO_LARGE",
      LedgerError,
    );
    // The early size check is exact for a first row: 1 MiB with its newline is accepted, one
    // byte more is refused.
    const time = "2026-11-29T18:02:10+00:00";
    const empty = canonical({ action: "x", mac: "0".repeat(64), prev: "", text: "", time });
    const fill = "y".repeat(MAX_ROW_BYTES - empty.length - 1);
    await refuses(
      sb,
      () => appendRow(sb.project, KEY.hmac, { action: "x", text: fill + "y" }),
      "LEDGER_ROW_TOO_LARGE",
      LedgerError,
    );
    const r = await appendRow(sb.project, KEY.hmac, { action: "x", text: fill });
    assert.equal(utf8(r.line + "\n").length, MAX_ROW_BYTES);
  });
});

/** Symlink layouts: a redirected ledger file, and a redirected `.agentteams`. */
async function symlinkedProject(
  sb: Sandbox,
  which: "ledger" | "dir" | "head" | "dispatches" | "lock",
): Promise<void> {
  const target = join(sb.dir, "elsewhere");
  await copyFixture(target);
  const p = stateFiles(sb.project);
  const t = stateFiles(target);
  await Deno.writeTextFile(t.lock, "");
  if (which === "dir") {
    await Deno.symlink(t.dir, p.dir);
    return;
  }
  await copyTree(t.dir, p.dir);
  const map = { ledger: "ledger", head: "head", dispatches: "dispatches", lock: "lock" } as const;
  const k = map[which];
  await Deno.remove(p[k]);
  await Deno.symlink(t[k], p[k]);
}

Deno.test("LEDGER_UNSAFE_PATH: a symlinked ledger or .agentteams refuses verify, append, dispatch and repair; nothing changes, the target included", async (t) => {
  for (const which of ["ledger", "dir"] as const) {
    await t.step(
      which === "dir" ? ".agentteams is a symlink" : "the ledger is a symlink",
      () =>
        withSandbox("unsafe", async (sb) => {
          await symlinkedProject(sb, which);
          writeBrief(sb.project);
          const before = await snapshotTree(sb.dir);
          const ops: [string, () => unknown][] = [
            ["verifyLedgerAt", () => verifyLedgerAt(sb.project, FIXTURE_KEY)],
            ["appendRow", () => appendRow(sb.project, FIXTURE_KEY.hmac, { action: "x" })],
            ["issueDispatch", () => issueDispatch(sb.project, FIXTURE_KEY.hmac, "worker")],
            ["repairTornTail", () => repairTornTail(sb.project, FIXTURE_KEY)],
          ];
          if (which === "dir") {
            // Resolving a nonce touches only the dispatch store, inside the symlinked dir here.
            ops.push([
              "resolveDispatch",
              () => resolveDispatch(sb.project, FIXTURE_KEY.hmac, "0".repeat(32), { count: "use" }),
            ]);
          }
          for (const [name, op] of ops) {
            await assertRefusal(op, "LEDGER_UNSAFE_PATH", LedgerError, name);
            assertSameTree(before, await snapshotTree(sb.dir), `after ${name}`);
          }
          const env = { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: FIXTURE_KEY_TEXT };
          for (
            const [cmd, args] of [
              ["ledger verify", ["ledger", "verify"]],
              ["dispatch", ["dispatch", "--agent", "worker"]],
              ["ledger show", ["ledger", "show"]],
              ["ledger repair", ["ledger", "repair", "--torn-tail"]],
            ] as const
          ) {
            const r = await runCli([...args, "--project", sb.project], { env });
            assertCliRefused(r, cmd, "LEDGER_UNSAFE_PATH");
          }
          assertSameTree(before, await snapshotTree(sb.dir), "after the CLI");
        }),
    );
  }
});

Deno.test("LEDGER_UNSAFE_PATH: a symlinked head, dispatch store or dispatch lock is refused too", async (t) => {
  for (const which of ["head", "dispatches", "lock"] as const) {
    await t.step(which, () =>
      withSandbox("unsafe2", async (sb) => {
        await symlinkedProject(sb, which);
        const before = await snapshotTree(sb.dir);
        const ops: (() => unknown)[] = [
          () => issueDispatch(sb.project, FIXTURE_KEY.hmac, "worker"),
        ];
        if (which === "head") {
          ops.push(() => verifyLedgerAt(sb.project, FIXTURE_KEY));
          ops.push(() => appendRow(sb.project, FIXTURE_KEY.hmac, { action: "x" }));
        }
        if (which === "dispatches") ops.push(() => verifyLedgerAt(sb.project, FIXTURE_KEY));
        if (which !== "head") {
          ops.push(() =>
            resolveDispatch(sb.project, FIXTURE_KEY.hmac, "0".repeat(32), { count: "use" })
          );
        }
        for (const op of ops) {
          await assertRefusal(op, "LEDGER_UNSAFE_PATH", LedgerError);
          assertSameTree(before, await snapshotTree(sb.dir));
        }
      }));
  }
});

Deno.test("LEDGER_UNSAFE_PATH: a head that is a FIFO, a directory or over 4 KiB refuses append and verify, writing nothing", async (t) => {
  const damages: [string, (head: string) => Promise<void>][] = [
    ["fifo", async (head) => {
      const r = await new Deno.Command("mkfifo", { args: [head] }).output();
      assert.equal(r.code, 0, "mkfifo");
    }],
    ["directory", (head) => Deno.mkdir(head)],
    // Regular, so it passes the kind check: the size cap of the safe read refuses it.
    ["oversized", (head) => Deno.writeTextFile(head, " ".repeat(4097))],
  ];
  for (const [name, damage] of damages) {
    await t.step(name, () =>
      withSandbox("unsafe-head", async (sb) => {
        await copyFixture(sb.project);
        const p = stateFiles(sb.project);
        await Deno.remove(p.head);
        await damage(p.head);
        for (
          const op of [
            () => appendRow(sb.project, FIXTURE_KEY.hmac, { action: "x" }),
            () => verifyLedgerAt(sb.project, FIXTURE_KEY),
          ]
        ) {
          await refuses(sb, op, "LEDGER_UNSAFE_PATH", LedgerError);
        }
      }));
  }
});

Deno.test("writeAhead: start row, act, completion row; a throwing act leaves the start row alone", async () => {
  await withSandbox("write-ahead", async (sb) => {
    const order: string[] = [];
    const out = await writeAhead(sb.project, KEY.hmac, { action: "x-start" }, () => {
      order.push("act");
      return Promise.resolve({ result: 7, complete: { action: "x", value: 7 } });
    });
    assert.equal(out, 7);
    await assert.rejects(
      writeAhead(sb.project, KEY.hmac, { action: "y-start" }, () => {
        // The start row is already durable when the act runs.
        const rows = Deno.readTextFileSync(stateFiles(sb.project).ledger).trim().split("\n");
        order.push(JSON.parse(rows[rows.length - 1]).action);
        return Promise.reject(new Error("boom"));
      }),
      /boom/,
    );
    await writeAhead(
      sb.project,
      KEY.hmac,
      { action: "z-start" },
      () => Promise.resolve({ result: null, complete: null }),
    );
    const actions = (await lines(stateFiles(sb.project).ledger)).map((l) => JSON.parse(l).action);
    assert.deepEqual(actions, ["x-start", "x", "y-start", "z-start"]);
    assert.deepEqual(order, ["act", "y-start"]);
    assert.equal(verifyLedgerAt(sb.project, KEY).ok, true);
  });
});
