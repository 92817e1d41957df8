/**
 * The ledger tamper suite: every kind of damage gets its own code and row number, from
 * `verifyLedgerAt` in process AND from the real CLI (`agentteams ledger verify`: exit 1, the
 * refusal line on stderr naming the first problem, the full list with --json).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { canonical } from "../../lib/pycompat/canonical.ts";
import { MAX_ROW_BYTES } from "../../lib/ledger/row.ts";
import { verifyLedgerAt, type VerifyReport } from "../../lib/ledger/verify.ts";
import {
  buildLedger,
  headFor,
  joinLines,
  keyOf,
  runCli,
  type Sandbox,
  sandbox,
  stateFiles,
} from "../_helpers/mod.ts";
import { copyFixture, type Fixture, FIXTURE_KEY, FIXTURE_KEY_TEXT } from "./_fixture.ts";
import { assertCliRefused } from "../_helpers/assert.ts";

type Expect = [code: string, row: number | null][];

interface Case {
  name: string;
  /** Damages the copy; `f.lines` etc. describe the intact state. */
  damage: (p: ReturnType<typeof stateFiles>, f: Fixture) => Promise<void>;
  /** Every problem, in order. */
  expect: Expect;
}

const edit = (line: string, change: (o: Record<string, unknown>) => void): string => {
  const o = JSON.parse(line) as Record<string, unknown>;
  change(o);
  return canonical(o);
};

const CASES: Case[] = [
  {
    name: "an edited row (value changed, MAC kept)",
    damage: (p, f) => {
      const lines = [...f.lines];
      lines[2] = edit(lines[2], (o) => (o.text = "row 3, edited"));
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_MAC_INVALID", 3]],
  },
  {
    name: "an edited row (only its layout changed)",
    damage: (p, f) => {
      const lines = [...f.lines];
      lines[3] = lines[3].replace('{"action": ', '{"action":');
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_MAC_INVALID", 4]],
  },
  {
    name: "an edited first row (its MAC recomputed with a guessed key)",
    damage: (p, f) => {
      const other = keyOf("guess");
      const lines = [...f.lines];
      const o = JSON.parse(lines[0]) as Record<string, unknown>;
      delete o.mac;
      o.agent = "intruder";
      lines[0] = canonical({ ...o, mac: other.hmac.hex(canonical(o)) });
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_MAC_INVALID", 1]],
  },
  {
    name: "the first row removed",
    damage: (p, f) => Deno.writeTextFile(p.ledger, joinLines(f.lines.slice(1))),
    expect: [["FIRST_ROWS_REMOVED", 1], ["HEAD_MISMATCH", null]],
  },
  {
    name: "a middle row removed",
    damage: (p, f) =>
      Deno.writeTextFile(p.ledger, joinLines([...f.lines.slice(0, 2), ...f.lines.slice(3)])),
    expect: [["ROWS_REMOVED", 3], ["HEAD_MISMATCH", null]],
  },
  {
    name: "the last row removed",
    damage: (p, f) => Deno.writeTextFile(p.ledger, joinLines(f.lines.slice(0, 5))),
    expect: [["LAST_ROW_REMOVED", null]],
  },
  {
    name: "two rows swapped",
    damage: (p, f) => {
      const l = f.lines;
      return Deno.writeTextFile(p.ledger, joinLines([l[0], l[1], l[3], l[2], l[4], l[5]]));
    },
    expect: [["ROWS_REORDERED", 3], ["ROWS_REORDERED", 4], ["ROWS_REORDERED", 5]],
  },
  {
    name: "a row duplicated",
    damage: (p, f) => {
      const l = f.lines;
      return Deno.writeTextFile(p.ledger, joinLines([l[0], l[1], l[2], l[1], l[3], l[4], l[5]]));
    },
    expect: [["ROWS_REORDERED", 4], ["ROWS_REORDERED", 5], ["HEAD_MISMATCH", null]],
  },
  {
    name: "the file cut mid-row (rows 5 and 6 partly gone)",
    damage: (p, f) =>
      Deno.writeTextFile(p.ledger, joinLines(f.lines.slice(0, 4)) + f.lines[4].slice(0, 40)),
    expect: [["TRUNCATED", 5]],
  },
  {
    name: "the file cut inside its last row",
    damage: (p, f) =>
      Deno.writeTextFile(p.ledger, joinLines(f.lines.slice(0, 5)) + f.lines[5].slice(0, 100)),
    expect: [["TRUNCATED", 6]],
  },
  {
    name: "the file cut at a row boundary, three rows gone",
    damage: (p, f) => Deno.writeTextFile(p.ledger, joinLines(f.lines.slice(0, 3))),
    expect: [["TRUNCATED", 4]],
  },
  {
    name: "the file emptied (head kept)",
    damage: (p) => Deno.writeTextFile(p.ledger, ""),
    expect: [["TRUNCATED", 1]],
  },
  {
    name: "ledger and head rewritten with another key",
    damage: async (p, f) => {
      const other = keyOf("another-key");
      const bodies = f.lines.map((l) => {
        const o = JSON.parse(l) as Record<string, unknown>;
        delete o.mac;
        delete o.prev;
        delete o.time;
        return o as Record<string, string>;
      });
      const b = buildLedger(bodies, other.hmac);
      await Deno.writeTextFile(p.ledger, b.text);
      await Deno.writeTextFile(p.head, b.head);
    },
    // The dispatch store, still signed with the right key, verifies.
    expect: [["FOREIGN_KEY", null]],
  },
  {
    name: "the head missing",
    damage: (p) => Deno.remove(p.head),
    expect: [["HEAD_MISSING", null]],
  },
  {
    name: "the head edited (count changed, MAC kept)",
    damage: (p, f) => {
      const h = JSON.parse(f.head);
      h.count = 7;
      return Deno.writeTextFile(p.head, canonical(h) + "\n");
    },
    expect: [["HEAD_MAC_INVALID", null]],
  },
  {
    name: "the head edited (MAC changed)",
    damage: (p, f) => {
      const h = JSON.parse(f.head);
      h.mac = h.mac.slice(0, 60) + (h.mac.endsWith("0000") ? "1111" : "0000");
      return Deno.writeTextFile(p.head, canonical(h) + "\n");
    },
    expect: [["HEAD_MAC_INVALID", null]],
  },
  {
    name: "the head not JSON",
    damage: (p) => Deno.writeTextFile(p.head, "{not json\n"),
    expect: [["HEAD_MALFORMED", null]],
  },
  {
    name: "a head from another ledger (same key, same count)",
    damage: (p) => {
      const other = buildLedger(
        [1, 2, 3, 4, 5, 6].map((n) => ({ action: "other", n })),
        FIXTURE_KEY.hmac,
      );
      return Deno.writeTextFile(p.head, other.head);
    },
    expect: [["HEAD_MISMATCH", null]],
  },
  {
    name: "the head re-signed for fewer rows than the ledger holds",
    damage: (p, f) => Deno.writeTextFile(p.head, headFor(f.lines.slice(0, 3), FIXTURE_KEY.hmac)),
    expect: [["HEAD_MISMATCH", null]],
  },
  {
    name: "the ledger and head missing while the dispatch store exists",
    damage: async (p) => {
      await Deno.remove(p.ledger);
      await Deno.remove(p.head);
    },
    expect: [["LEDGER_MISSING", null]],
  },
  {
    name: "the ledger missing, its head left",
    damage: (p) => Deno.remove(p.ledger),
    expect: [["LEDGER_MISSING", null]],
  },
  {
    name: "a torn final row after rows that match the head",
    damage: (p, f) =>
      Deno.writeTextFile(p.ledger, joinLines(f.lines) + '{"action": "note", "n": 7, "te'),
    expect: [["TORN_TAIL", 7]],
  },
  {
    name: "a dispatch-store row edited",
    damage: (p, f) =>
      Deno.writeTextFile(
        p.dispatches,
        f.dispatches.replace('"agent": "worker"', '"agent": "admin"'),
      ),
    expect: [["DISPATCH_ROW_INVALID", 1]],
  },
  {
    name: "a dispatch-store row that is not JSON",
    damage: (p, f) => Deno.writeTextFile(p.dispatches, f.dispatches + "garbage\n"),
    expect: [["DISPATCH_ROW_INVALID", 2]],
  },
  {
    name: "a malformed JSON line",
    damage: (p, f) => {
      const lines = [...f.lines];
      lines[2] = lines[2].slice(0, -1);
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_MALFORMED", 3]],
  },
  {
    name: "a row that is not an object ([])",
    damage: (p, f) => {
      const lines = [...f.lines];
      lines[2] = "[]";
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_MALFORMED", 3]],
  },
  {
    name: "an empty line in the middle",
    damage: (p, f) => {
      const lines = [...f.lines];
      lines[1] = "";
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_MALFORMED", 2]],
  },
  ...(["mac", "prev", "time"] as const).map((k): Case => ({
    name: `a row without '${k}'`,
    damage: (p, f) => {
      const lines = [...f.lines];
      lines[3] = edit(lines[3], (o) => delete o[k]);
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_MALFORMED", 4]],
  })),
  {
    name: "a row whose mac is not a string",
    damage: (p, f) => {
      const lines = [...f.lines];
      lines[3] = edit(lines[3], (o) => (o.mac = 5));
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_MALFORMED", 4]],
  },
  {
    name: "a line over 1 MiB",
    damage: (p, f) => {
      const lines = [...f.lines];
      lines[2] = edit(lines[2], (o) => (o.text = "x".repeat(MAX_ROW_BYTES)));
      return Deno.writeTextFile(p.ledger, joinLines(lines));
    },
    expect: [["ROW_TOO_LARGE", 3]],
  },
];

function problems(r: VerifyReport): Expect {
  return r.problems.map((p) => [p.code, p.row]);
}

async function withCase<T>(
  c: Case,
  fn: (sb: Sandbox, p: ReturnType<typeof stateFiles>) => Promise<T>,
): Promise<T> {
  const sb = await sandbox("tamper");
  try {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    await c.damage(p, f);
    return await fn(sb, p);
  } finally {
    await sb.dispose();
  }
}

Deno.test("the intact fixture verifies, in process and through the CLI", async () => {
  await withCase({ name: "intact", damage: () => Promise.resolve(), expect: [] }, async (sb) => {
    const r = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.equal(r.ok, true);
    assert.equal(r.rows, 6);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.notes, []);
    assert.equal(r.tail, null);
    const cli = await runVerify(sb);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^ok: 6 rows verify$/m);
    assert.doesNotMatch(cli.stderr, /refused/);
  });
});

Deno.test("verifyLedgerAt: each kind of damage has its own code and row", async (t) => {
  for (const c of CASES) {
    await t.step(c.name, () =>
      withCase(c, (sb) => {
        const r = verifyLedgerAt(sb.project, FIXTURE_KEY);
        assert.equal(r.ok, false);
        assert.deepEqual(problems(r), c.expect);
        return Promise.resolve();
      }));
  }
});

function runVerify(sb: Sandbox, json = false) {
  return runCliWithKey(sb, [
    "ledger",
    "verify",
    "--project",
    sb.project,
    ...(json ? ["--json"] : []),
  ]);
}

function runCliWithKey(sb: Sandbox, args: string[]) {
  return runCli(args, { env: { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: FIXTURE_KEY_TEXT } });
}

Deno.test("CLI ledger verify: exit 1, the refusal line names the first problem, --json lists all", async (t) => {
  for (const c of CASES) {
    await t.step(c.name, () =>
      withCase(c, async (sb) => {
        const r = await runVerify(sb, true);
        const refusal = assertCliRefused(r, "ledger verify", c.expect[0][0]);
        const lines = r.stdout.trim().split("\n");
        assert.equal(lines.length, 1, `one JSON object on stdout:\n${r.stdout}`);
        const out = JSON.parse(lines[0]);
        assert.equal(out.ok, false);
        assert.deepEqual(
          (out.problems as { code: string; row: number | null }[]).map((p) => [p.code, p.row]),
          c.expect,
        );
        assert.equal(out.error.code, c.expect[0][0]);
        assert.equal(out.error.row, c.expect[0][1]);
        assert.equal(refusal.reason, out.problems[0].message);
      }));
  }
});

Deno.test("CLI ledger verify (human output): the row number is printed with each code", async () => {
  const c = CASES.find((x) => x.name === "a middle row removed")!;
  await withCase(c, async (sb) => {
    const r = await runVerify(sb);
    assertCliRefused(r, "ledger verify", "ROWS_REMOVED");
    assert.match(r.stdout, /^row 3: ROWS_REMOVED: /m);
    assert.match(r.stdout, /^ledger: HEAD_MISMATCH: /m);
    assert.doesNotMatch(r.stdout, /^ok:/m);
  });
});

Deno.test("a torn tail is reported as TORN_TAIL only, with its offset and length", async () => {
  const c = CASES.find((x) => x.name.startsWith("a torn final row"))!;
  await withCase(c, async (sb, p) => {
    const r = verifyLedgerAt(sb.project, FIXTURE_KEY);
    const size = (await Deno.stat(p.ledger)).size;
    const fragment = '{"action": "note", "n": 7, "te'.length;
    assert.deepEqual(r.tail, { offset: size - fragment, length: fragment, complete: false });
    assert.equal(r.rows, 6);
  });
});

Deno.test("a ledger rewritten with another key, verified with the right key: FOREIGN_KEY only", async () => {
  // Without a dispatch store, so the key mismatch is the only finding.
  await withCase(
    CASES.find((c) => c.name.startsWith("ledger and head rewritten"))!,
    async (sb, p) => {
      await Deno.remove(p.dispatches);
      const r = verifyLedgerAt(sb.project, FIXTURE_KEY);
      assert.deepEqual(problems(r), [["FOREIGN_KEY", null]]);
      // With the other key, the same files verify.
      assert.equal(verifyLedgerAt(sb.project, keyOf("another-key")).ok, true);
    },
  );
});

Deno.test("verifying with the wrong key is never ok", async () => {
  await withCase({ name: "intact", damage: () => Promise.resolve(), expect: [] }, (sb) => {
    const r = verifyLedgerAt(sb.project, keyOf("wrong"));
    assert.equal(r.ok, false);
    assert.equal(r.problems[0].code, "FOREIGN_KEY");
    return Promise.resolve();
  });
});

Deno.test("no state at all verifies (nothing to check); a lone head is LEDGER_MISSING", async () => {
  const sb = await sandbox("tamper-empty");
  try {
    assert.deepEqual(verifyLedgerAt(sb.project, FIXTURE_KEY), {
      ok: true,
      rows: 0,
      problems: [],
      notes: [],
      tail: null,
    });
    await Deno.mkdir(join(sb.project, ".agentteams"));
    assert.equal(verifyLedgerAt(sb.project, FIXTURE_KEY).ok, true);
    const p = stateFiles(sb.project);
    // An empty ledger with a head for zero rows is intact.
    await Deno.writeTextFile(p.ledger, "");
    await Deno.writeTextFile(p.head, headFor([], FIXTURE_KEY.hmac));
    assert.equal(verifyLedgerAt(sb.project, FIXTURE_KEY).ok, true);
    await Deno.remove(p.ledger);
    assert.deepEqual(problems(verifyLedgerAt(sb.project, FIXTURE_KEY)), [["LEDGER_MISSING", null]]);
  } finally {
    await sb.dispose();
  }
});
