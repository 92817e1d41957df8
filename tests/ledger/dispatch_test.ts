/**
 * Dispatch nonces: slug and nonce formats, unknown / expired / exhausted dispatches, attempts vs
 * uses, agent mismatch, compaction, what is stored (the HMAC id, never the nonce), a tampered
 * store, an interrupted store append. Each refusal also proves nothing was written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  agentFor,
  DISPATCH_MAX_ATTEMPTS,
  DISPATCH_MAX_USES,
  dispatchId,
  issueDispatch,
  resolveDispatch,
} from "../../lib/ledger/dispatch.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { DispatchError, LedgerError } from "../../lib/errors.ts";
import {
  hmacHex,
  keyOf,
  pyDumps,
  runCli,
  snapshotTree,
  stateFiles,
  writeBrief,
} from "../_helpers/mod.ts";
import { refuses, withSandbox } from "./_fixture.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";

const KEY_TEXT = "dispatch-key";
const KEY = keyOf(KEY_TEXT);
const T0 = new Date(Date.UTC(2026, 10, 29, 18, 2, 10));
const at = (ms: number) => () => new Date(T0.getTime() + ms);
const HOUR = 3600_000;

async function storeRows(project: string): Promise<Record<string, unknown>[]> {
  const t = await Deno.readTextFile(stateFiles(project).dispatches);
  return t.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test("issueDispatch: the store row and ledger row, in the earlier tool's format", async () => {
  await withSandbox("dispatch-format", async (sb) => {
    const d = await issueDispatch(sb.project, KEY.hmac, "worker", { now: () => T0 });
    assert.match(d.nonce, /^[0-9a-f]{32}$/);
    assert.equal(d.id, hmacHex(KEY_TEXT, "dispatch:" + d.nonce));
    assert.equal(d.id, dispatchId(KEY.hmac, d.nonce));
    assert.equal(d.expires, "2026-11-30T18:02:10+00:00");
    assert.equal(d.compacted, 0);
    const p = stateFiles(sb.project);
    const line = (await Deno.readTextFile(p.dispatches)).trimEnd();
    const row = JSON.parse(line);
    const { mac, ...signed } = row;
    assert.deepEqual(signed, { agent: "worker", expires: d.expires, id: d.id, max_uses: 25 });
    assert.equal(mac, hmacHex(KEY_TEXT, pyDumps(signed)));
    assert.equal(line, pyDumps(row));
    const ledger = JSON.parse((await Deno.readTextFile(p.ledger)).trimEnd());
    assert.equal(ledger.action, "issue-dispatch");
    assert.equal(ledger.agent, "worker");
    assert.equal(ledger.id, d.id.slice(0, 12));
    assert.equal(ledger.time, "2026-11-29T18:02:10+00:00");
    // The lock file exists and is never replaced.
    const lockIno = (await Deno.stat(p.lock)).ino;
    await issueDispatch(sb.project, KEY.hmac, "reviewer", { now: () => T0 });
    assert.equal((await Deno.stat(p.lock)).ino, lockIno);
    assert.equal((await Deno.stat(p.dispatches)).mode! & 0o077, 0);
    assert.equal(verifyLedgerAt(sb.project, KEY).ok, true);
  });
});

Deno.test("slug validation: BAD_SLUG, nothing created", async () => {
  await withSandbox("dispatch-slug", async (sb) => {
    for (
      const slug of [
        "",
        "Worker",
        "-w",
        "w_x",
        "a b",
        "w/x",
        "../x",
        "\u00fc",
        "w\n",
        "w.",
        " w",
        "w\u0000",
      ]
    ) {
      await refuses(sb, () => issueDispatch(sb.project, KEY.hmac, slug), "BAD_SLUG");
    }
    for (const slug of ["w", "0", "qa-1", "a-", "9lives"]) {
      const d = await issueDispatch(sb.project, KEY.hmac, slug);
      assert.equal(await agentFor(sb.project, KEY.hmac, d.nonce), slug);
    }
  });
});

Deno.test("nonce format: BAD_NONCE, nothing written", async () => {
  await withSandbox("dispatch-nonce", async (sb) => {
    const { nonce } = await issueDispatch(sb.project, KEY.hmac, "worker");
    for (
      const bad of [
        "",
        nonce.slice(1),
        nonce + "0",
        nonce.toUpperCase().replace(/[0-9]/g, "A"),
        "g".repeat(32),
        nonce + "\n",
        " " + nonce.slice(1),
        nonce.slice(0, 31) + "\u0660",
      ]
    ) {
      for (const count of ["none", "attempt", "use"] as const) {
        await refuses(sb, () => resolveDispatch(sb.project, KEY.hmac, bad, { count }), "BAD_NONCE");
      }
    }
  });
});

Deno.test("unknown nonce: DISPATCH_UNKNOWN, nothing written (also on a project with no state)", async () => {
  await withSandbox("dispatch-unknown", async (sb) => {
    const other = "0123456789abcdef0123456789abcdef";
    await refuses(
      sb,
      () => resolveDispatch(sb.project, KEY.hmac, other, { count: "use" }),
      "DISPATCH_UNKNOWN",
    );
    await issueDispatch(sb.project, KEY.hmac, "worker");
    await refuses(
      sb,
      () => resolveDispatch(sb.project, KEY.hmac, other, { count: "attempt" }),
      "DISPATCH_UNKNOWN",
    );
    // A nonce issued under another key is unknown under this one.
    Deno.mkdirSync(join(sb.dir, "other"));
    const foreign = await issueDispatch(join(sb.dir, "other"), keyOf("k2").hmac, "worker");
    await refuses(sb, () => agentFor(sb.project, KEY.hmac, foreign.nonce), "DISPATCH_UNKNOWN");
  });
});

Deno.test("expiry: valid up to and including `expires`, DISPATCH_EXPIRED one second later", async () => {
  await withSandbox("dispatch-expiry", async (sb) => {
    const { nonce } = await issueDispatch(sb.project, KEY.hmac, "worker", { now: () => T0 });
    const rec = await resolveDispatch(sb.project, KEY.hmac, nonce, {
      count: "none",
      now: at(24 * HOUR),
    });
    assert.equal(rec.agent, "worker");
    await refuses(
      sb,
      () =>
        resolveDispatch(sb.project, KEY.hmac, nonce, { count: "use", now: at(24 * HOUR + 1000) }),
      "DISPATCH_EXPIRED",
    );
    await refuses(
      sb,
      () => resolveDispatch(sb.project, KEY.hmac, nonce, { count: "attempt", now: at(48 * HOUR) }),
      "DISPATCH_EXPIRED",
    );
  });
});

Deno.test("uses: 25 then DISPATCH_EXHAUSTED; the store holds exactly 25 use rows", async () => {
  await withSandbox("dispatch-uses", async (sb) => {
    const { nonce, id } = await issueDispatch(sb.project, KEY.hmac, "worker");
    for (let i = 1; i <= DISPATCH_MAX_USES; i++) {
      const r = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "use" });
      assert.equal(r.uses, i);
      assert.equal(r.attempts, 0);
    }
    assert.equal(DISPATCH_MAX_USES, 25);
    for (const count of ["use", "attempt", "none"] as const) {
      await refuses(
        sb,
        () => resolveDispatch(sb.project, KEY.hmac, nonce, { count }),
        "DISPATCH_EXHAUSTED",
      );
    }
    const rows = await storeRows(sb.project);
    assert.equal(rows.filter((r) => r.use === id).length, 25);
    // Identical use rows have identical MACs (as in the earlier tool).
    assert.equal(new Set(rows.filter((r) => r.use === id).map((r) => r.mac)).size, 1);
    assert.equal(verifyLedgerAt(sb.project, KEY).ok, true);
  });
});

Deno.test("attempts: 100 then ATTEMPTS_EXHAUSTED; attempts spend no uses", async () => {
  await withSandbox("dispatch-attempts", async (sb) => {
    const { nonce, id } = await issueDispatch(sb.project, KEY.hmac, "worker");
    for (let i = 1; i <= DISPATCH_MAX_ATTEMPTS; i++) {
      const r = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "attempt" });
      assert.equal(r.attempts, i);
      assert.equal(r.uses, 0);
    }
    assert.equal(DISPATCH_MAX_ATTEMPTS, 100);
    await refuses(
      sb,
      () => resolveDispatch(sb.project, KEY.hmac, nonce, { count: "attempt" }),
      "ATTEMPTS_EXHAUSTED",
    );
    // Uses are a separate budget.
    const used = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "use" });
    assert.equal(used.uses, 1);
    assert.equal(used.attempts, 100);
    const rows = await storeRows(sb.project);
    assert.equal(rows.filter((r) => r.attempt === id).length, 100);
    assert.equal(rows.filter((r) => r.use === id).length, 1);
  });
});

Deno.test("AGENT_MISMATCH: refused, and the attempt is counted", async () => {
  await withSandbox("dispatch-mismatch", async (sb) => {
    const { nonce, id } = await issueDispatch(sb.project, KEY.hmac, "worker");
    await assertRefusal(
      () =>
        resolveDispatch(sb.project, KEY.hmac, nonce, { count: "attempt", expectAgent: "reviewer" }),
      "AGENT_MISMATCH",
      DispatchError,
    );
    const rec = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "none" });
    assert.equal(rec.attempts, 1);
    assert.equal(rec.uses, 0);
    assert.equal((await storeRows(sb.project)).filter((r) => r.attempt === id).length, 1);
    const ok = await resolveDispatch(sb.project, KEY.hmac, nonce, {
      count: "attempt",
      expectAgent: "worker",
    });
    assert.equal(ok.attempts, 2);
  });
});

Deno.test("AGENT_MISMATCH on a use: refused, no use spent, nothing written", async () => {
  await withSandbox("dispatch-mismatch-use", async (sb) => {
    const { nonce } = await issueDispatch(sb.project, KEY.hmac, "worker");
    await refuses(
      sb,
      () => resolveDispatch(sb.project, KEY.hmac, nonce, { count: "use", expectAgent: "reviewer" }),
      "AGENT_MISMATCH",
      DispatchError,
    );
    const rec = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "none" });
    assert.equal(rec.uses, 0);
  });
});

Deno.test("issue compacts expired dispatches and their rows away", async () => {
  await withSandbox("dispatch-compact", async (sb) => {
    const a = await issueDispatch(sb.project, KEY.hmac, "old", { now: () => T0 });
    await resolveDispatch(sb.project, KEY.hmac, a.nonce, { count: "use", now: () => T0 });
    await resolveDispatch(sb.project, KEY.hmac, a.nonce, { count: "attempt", now: () => T0 });
    const b = await issueDispatch(sb.project, KEY.hmac, "live", { now: at(2 * HOUR) });
    await resolveDispatch(sb.project, KEY.hmac, b.nonce, { count: "use", now: at(2 * HOUR) });
    const c = await issueDispatch(sb.project, KEY.hmac, "new", { now: at(25 * HOUR) });
    assert.equal(c.compacted, 1);
    const rows = await storeRows(sb.project);
    const ids = new Set(rows.map((r) => (r.id ?? r.use ?? r.attempt) as string));
    assert.deepEqual([...ids].sort(), [b.id, c.id].sort());
    assert.equal(rows.length, 3); // b, b's use, c
    await assertRefusal(
      () => agentFor(sb.project, KEY.hmac, a.nonce),
      "DISPATCH_UNKNOWN",
      DispatchError,
    );
    const rb = await resolveDispatch(sb.project, KEY.hmac, b.nonce, {
      count: "none",
      now: at(25 * HOUR),
    });
    assert.equal(rb.uses, 1);
    // The ledger keeps every issue row; only the store is compacted.
    assert.equal(verifyLedgerAt(sb.project, KEY).rows, 3);
    assert.equal(verifyLedgerAt(sb.project, KEY).ok, true);
  });
});

Deno.test("only the HMAC id is stored: the nonce text appears nowhere under .agentteams", async () => {
  await withSandbox("dispatch-secret", async (sb) => {
    const nonces: string[] = [];
    for (const agent of ["a", "b"]) {
      const d = await issueDispatch(sb.project, KEY.hmac, agent);
      nonces.push(d.nonce);
      await resolveDispatch(sb.project, KEY.hmac, d.nonce, { count: "attempt" });
      await resolveDispatch(sb.project, KEY.hmac, d.nonce, { count: "use" });
    }
    writeBrief(sb.project, ["c"]);
    const cli = await runCli(["dispatch", "--agent", "c", "--project", sb.project], {
      env: { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: KEY_TEXT },
    });
    assert.equal(cli.code, 0, cli.stderr);
    nonces.push(cli.stdout.trim());
    assert.match(nonces[2], /^[0-9a-f]{32}$/);
    const all = [];
    for await (const e of Deno.readDir(stateFiles(sb.project).dir)) {
      all.push(await Deno.readTextFile(join(stateFiles(sb.project).dir, e.name)));
    }
    const blob = all.join("\n");
    for (const n of nonces) {
      assert.ok(!blob.includes(n), "nonce stored");
      assert.ok(!blob.includes(n.slice(0, 16)), "half a nonce stored");
      assert.ok(blob.includes(hmacHex(KEY_TEXT, "dispatch:" + n)), "id not stored");
    }
    // The CLI printed the nonce once, and nothing else on stdout.
    assert.equal(cli.stdout, nonces[2] + "\n");
    assert.equal(await agentFor(sb.project, KEY.hmac, nonces[2]), "c");
  });
});

Deno.test("a row of the nonce's own dispatch that fails its MAC makes resolve refuse (LEDGER_TAMPERED), writing nothing", async () => {
  await withSandbox("dispatch-tampered", async (sb) => {
    const { nonce, id } = await issueDispatch(sb.project, KEY.hmac, "worker");
    await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "use" });
    const p = stateFiles(sb.project);
    const text = await Deno.readTextFile(p.dispatches);
    const edits = [
      // max_uses raised, MAC kept
      text.replace('"max_uses": 25', '"max_uses": 99'),
      // a use row removed is invisible to MACs, but a forged row naming the dispatch is not
      text + pyDumps({ mac: "0".repeat(64), use: id }) + "\n",
      // the agent changed
      text.replace('"agent": "worker"', '"agent": "admin!"'),
      // a line naming the dispatch that is not even JSON
      text + `garbage ${id}\n`,
    ];
    for (const edited of edits) {
      assert.notEqual(edited, text);
      await Deno.writeTextFile(p.dispatches, edited);
      for (const count of ["none", "attempt", "use"] as const) {
        await refuses(
          sb,
          () => resolveDispatch(sb.project, KEY.hmac, nonce, { count }),
          "LEDGER_TAMPERED",
        );
      }
      const e = await assertRefusal(() => agentFor(sb.project, KEY.hmac, nonce), "LEDGER_TAMPERED");
      assert.ok(e instanceof LedgerError);
    }
  });
});

Deno.test("the use's read verifies no row the attempt's read verified; a row appended between them is verified", async () => {
  await withSandbox("dispatch-verified-once", async (sb) => {
    const { nonce } = await issueDispatch(sb.project, KEY.hmac, "worker");
    // A process that did not issue the dispatch (an act): it has verified nothing yet.
    const act = new HmacKey(new TextEncoder().encode(KEY_TEXT));
    const proto = HmacKey.prototype as unknown as { verify: (...a: unknown[]) => boolean };
    const real = proto.verify;
    let checks = 0;
    proto.verify = function (this: HmacKey, ...a: unknown[]) {
      checks++;
      return real.apply(this, a);
    };
    try {
      await resolveDispatch(sb.project, act, nonce, { count: "attempt" });
      assert.equal(checks, 1, "the attempt's read verifies the dispatch row");
      checks = 0;
      await resolveDispatch(sb.project, act, nonce, { count: "use" });
      assert.equal(checks, 0, "the dispatch row and the attempt row are known to verify");
      // A row naming the dispatch appended meanwhile that this process never saw is verified
      // (and refused): the earlier reads vouch for exact lines only.
      const p = stateFiles(sb.project);
      await Deno.writeTextFile(
        p.dispatches,
        pyDumps({ mac: "0".repeat(64), use: dispatchId(act, nonce) }) + "\n",
        {
          append: true,
        },
      );
      checks = 0;
      await refuses(
        sb,
        () => resolveDispatch(sb.project, act, nonce, { count: "use" }),
        "LEDGER_TAMPERED",
      );
      assert.ok(checks >= 1, "the new row's MAC was checked");
    } finally {
      proto.verify = real;
    }
  });
});

Deno.test("attemptSyncLater: the attempt row is written before resolve returns, its fsync settles `durable` after; an AGENT_MISMATCH waits for it", async () => {
  await withSandbox("dispatch-sync-later", async (sb) => {
    const { nonce, id } = await issueDispatch(sb.project, KEY.hmac, "worker");
    const proto = Deno.FsFile.prototype as unknown as { sync: () => Promise<void> };
    const real = proto.sync;
    let release!: () => void;
    const gate = new Promise<void>((r) => release = r);
    let pending = 0;
    proto.sync = function (this: Deno.FsFile) {
      pending++;
      return gate.then(() => real.call(this)).finally(() => pending--);
    };
    try {
      const rec = await resolveDispatch(sb.project, KEY.hmac, nonce, {
        count: "attempt",
        attemptSyncLater: true,
      });
      assert.equal(rec.attempts, 1);
      assert.equal(pending, 1, "the fsync is still in flight");
      let settled = false;
      rec.durable.then(() => settled = true);
      assert.deepEqual((await storeRows(sb.project)).filter((r) => r.attempt === id).length, 1);
      await new Promise((r) => setTimeout(r, 10));
      assert.equal(settled, false);
      release();
      await rec.durable;
      assert.equal(pending, 0);
      // A claimed agent that differs is refused only once its attempt is on disk.
      let refusedWhilePending = -1;
      const mismatch = resolveDispatch(sb.project, KEY.hmac, nonce, {
        count: "attempt",
        expectAgent: "other",
        attemptSyncLater: true,
      }).catch((e) => {
        refusedWhilePending = pending;
        throw e;
      });
      await assertRefusal(() => mismatch, "AGENT_MISMATCH");
      assert.equal(refusedWhilePending, 0);
    } finally {
      proto.sync = real;
    }
  });
});

Deno.test("rows of other dispatches are not an act's to check: resolve goes on, `ledger verify` names them", async () => {
  await withSandbox("dispatch-tampered-other", async (sb) => {
    const { nonce, id } = await issueDispatch(sb.project, KEY.hmac, "worker");
    const p = stateFiles(sb.project);
    const text = await Deno.readTextFile(p.dispatches);
    const edits = [
      // a forged use row of another dispatch
      text + pyDumps({ mac: "0".repeat(64), use: "x" }) + "\n",
      // a line that is not JSON, naming no dispatch
      text.replace("\n", "\ngarbage\n"),
    ];
    for (const edited of edits) {
      await Deno.writeTextFile(p.dispatches, edited);
      const rec = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "use" });
      assert.equal(rec.id, id);
      assert.equal(rec.agent, "worker");
      assert.equal(rec.uses, 1);
      // The use was counted where it belongs, and the forged line is left for the operator.
      const after = await Deno.readTextFile(p.dispatches);
      assert.equal(
        after,
        edited + pyDumps({ mac: hmacHex(KEY_TEXT, pyDumps({ use: id })), use: id }) + "\n",
      );
      const report = verifyLedgerAt(sb.project, KEY);
      assert.deepEqual(report.problems.map((x) => [x.code, x.row]), [["DISPATCH_ROW_INVALID", 2]]);
      await Deno.writeTextFile(p.dispatches, text);
    }
    // A nonce with no row of its own in such a store: the whole store is judged, and the refusal
    // is the tampering it holds, not an unknown dispatch.
    await Deno.writeTextFile(p.dispatches, edits[0]);
    await refuses(
      sb,
      () => resolveDispatch(sb.project, KEY.hmac, "0".repeat(32), { count: "use" }),
      "LEDGER_TAMPERED",
    );
  });
});

Deno.test("an unterminated last store line is ignored, and stays harmless across later appends", async () => {
  await withSandbox("dispatch-fragment", async (sb) => {
    const { nonce, id } = await issueDispatch(sb.project, KEY.hmac, "worker");
    const p = stateFiles(sb.project);
    // An interrupted append of a use row: never counted.
    const useRow = pyDumps({ mac: hmacHex(KEY_TEXT, pyDumps({ use: id })), use: id });
    await Deno.writeTextFile(p.dispatches, useRow.slice(0, 30), { append: true });
    let rec = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "none" });
    assert.equal(rec.uses, 0);
    // Counting goes on normally, and the store keeps verifying.
    rec = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "attempt" });
    assert.equal(rec.attempts, 1);
    rec = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "use" });
    assert.equal(rec.uses, 1);
    assert.equal(rec.attempts, 1);
    const v = verifyLedgerAt(sb.project, KEY);
    assert.deepEqual(v.problems, []);
  });
});

Deno.test("an unterminated store line longer than 64 KiB is cut whole by the next append", async () => {
  await withSandbox("dispatch-long-fragment", async (sb) => {
    const { nonce, id } = await issueDispatch(sb.project, KEY.hmac, "worker");
    const p = stateFiles(sb.project);
    const issued = await Deno.readTextFile(p.dispatches);
    await Deno.writeTextFile(p.dispatches, "x".repeat(70 * 1024), { append: true });
    let rec = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "use" });
    assert.equal(rec.uses, 1);
    const useRow = pyDumps({ mac: hmacHex(KEY_TEXT, pyDumps({ use: id })), use: id });
    assert.equal(await Deno.readTextFile(p.dispatches), issued + useRow + "\n");
    rec = await resolveDispatch(sb.project, KEY.hmac, nonce, { count: "none" });
    assert.equal(rec.uses, 1);
    assert.deepEqual(verifyLedgerAt(sb.project, KEY).problems, []);
  });
});

Deno.test("issue refuses while the store has lines that do not verify, writing nothing", async () => {
  await withSandbox("dispatch-drop", async (sb) => {
    await issueDispatch(sb.project, KEY.hmac, "worker");
    const p = stateFiles(sb.project);
    await Deno.writeTextFile(p.dispatches, "garbage\n", { append: true });
    const before = await snapshotTree(sb.dir);
    await assertRefusal(
      () => issueDispatch(sb.project, KEY.hmac, "reviewer"),
      "LEDGER_TAMPERED",
      LedgerError,
    );
    // The evidence stays for `ledger verify` to report.
    assertSameTree(before, await snapshotTree(sb.dir));
    const report = verifyLedgerAt(sb.project, KEY);
    assert.deepEqual(report.problems.map((x) => [x.code, x.row]), [["DISPATCH_ROW_INVALID", 2]]);
  });
});

Deno.test("agentFor counts nothing", async () => {
  await withSandbox("dispatch-agentfor", async (sb) => {
    const { nonce } = await issueDispatch(sb.project, KEY.hmac, "qa");
    const before = await snapshotTree(sb.dir);
    for (let i = 0; i < 3; i++) assert.equal(await agentFor(sb.project, KEY.hmac, nonce), "qa");
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});
