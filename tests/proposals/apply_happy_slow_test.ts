/**
 * `agentteams apply` happy paths through the real CLI, against a real git repository and real
 * bwrap gates: a change to an existing file keeps its mode (0755 stays 0755), a new file is
 * 0644, a new file in new directories, a deletion; the `apply-proposal` / `delete-proposal` rows
 * (agent, path, base, new, bytes, gates, rationale stripped and cut to 300 code points as Python
 * does) and the JSON output `{agent, path, base_sha256, new_sha256, gates, written}`; and
 * `--dry-run`, which runs every check and gate on the proposed content, writes nothing, spends no
 * use but counts an attempt, and records no row.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  apply,
  assertApplied,
  assertLedgerVerifies,
  assertOnlyChanged,
  type Before,
  before,
  change,
  counts,
  deletion,
  dispatch,
  exists,
  expectRefusal,
  type Json,
  ledgerLines,
  ledgerRows,
  makeProject,
  type Project,
  type Row,
  sha256,
  snapshot,
  stateSet,
  storeLines,
  withProject,
} from "./_helpers.ts";

const BRIEF = JSON.stringify(
  {
    project_name: "happy",
    agent_policies: { worker: { write_scopes: ["src/", "docs/", "bin/"] } },
    proposal_gates: {
      "has-ok": { argv: ["/usr/bin/grep", "-q", "ok", "{file}"] },
      "path-is-guide": { argv: ["/usr/bin/test", "{path}", "=", "docs/a/b/guide.md"] },
      "docs-approved": { glob: "docs/*.md", argv: ["/usr/bin/grep", "-q", "approved", "{file}"] },
    },
  },
  null,
  2,
);

const SCRIPT = "#!/bin/sh\necho hi\n";

function setup(prefix: string): Promise<Project> {
  return makeProject(prefix, {
    brief: BRIEF,
    files: {
      "src/a.txt": "hello\n",
      "src/old.txt": "old\n",
      "bin/run.sh": { content: SCRIPT, mode: 0o755 },
      "docs/readme.md": "# approved\n",
    },
  });
}

const RESULT_KEYS = ["agent", "base_sha256", "gates", "new_sha256", "ok", "path", "written"];
const CHANGE_ROW_KEYS = [
  "action",
  "agent",
  "base",
  "bytes",
  "dispatch",
  "gates",
  "mac",
  "new",
  "path",
  "prev",
  "rationale",
  "time",
];
const DELETE_ROW_KEYS = [
  "action",
  "agent",
  "base",
  "dispatch",
  "mac",
  "path",
  "prev",
  "rationale",
  "time",
];

/** Asserts the acts since `b`: the only changed paths, new rows, and attempts/uses counted. */
async function assertActed(
  p: Project,
  b: Before,
  changed: string[],
  exp: { rows: number; attempts: number; uses: number },
): Promise<Row[]> {
  assertOnlyChanged(
    b.tree,
    await snapshot(p),
    new Set([...stateSet(p.root), ...changed.map((r) => join(p.root, r))]),
  );
  const lines = await ledgerLines(p.root);
  assert.deepEqual(lines.slice(0, b.ledger.length), b.ledger, "earlier ledger lines changed");
  const rows = lines.slice(b.ledger.length).map((l) => JSON.parse(l) as Row);
  assert.equal(rows.length, exp.rows, JSON.stringify(rows));
  const store = await storeLines(p.root);
  assert.deepEqual(store.slice(0, b.store.length), b.store, "earlier dispatch rows changed");
  assert.deepEqual(counts(store.slice(b.store.length)), {
    attempts: exp.attempts,
    uses: exp.uses,
  });
  assertLedgerVerifies(p);
  return rows;
}

function assertGateResults(gates: Json, names: string[]): void {
  assert.ok(Array.isArray(gates), JSON.stringify(gates));
  assert.deepEqual(gates.map((g) => (g as Row).gate), names);
  for (const g of gates as Row[]) {
    assert.deepEqual(Object.keys(g).sort(), ["backend", "confined", "duration_ms", "exit", "gate"]);
    assert.equal(g.exit, 0);
    assert.equal(g.confined, true);
    assert.equal(g.backend, "bwrap");
    assert.ok(Number.isSafeInteger(g.duration_ms) && (g.duration_ms as number) >= 0);
  }
}

Deno.test("a change to an existing 0755 file keeps its mode; the row and JSON carry every field", async () => {
  await withProject(setup("change"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const content = "#!/bin/sh\necho ok \u2713\n";
    // Python's strip() removes U+2003, U+0085, U+001C and U+3000 but not U+FEFF; the cut is by
    // code point, so each emoji counts once.
    const rationale = "\u2003\u0085 \u001c\ufeff" + "\u{1F600}".repeat(5) + "y".repeat(400) +
      "\u3000";
    const expectedRationale = "\ufeff" + "\u{1F600}".repeat(5) + "y".repeat(294);
    const b = await before(p);
    const out = assertApplied(
      await apply(
        p,
        change(nonce, "bin/run.sh", content, sha256(SCRIPT), {
          rationale,
          gates: ["has-ok"],
          agent: "worker",
        }),
      ),
    );
    assert.deepEqual(Object.keys(out).sort(), RESULT_KEYS);
    assert.equal(out.agent, "worker");
    assert.equal(out.path, "bin/run.sh");
    assert.equal(out.base_sha256, sha256(SCRIPT));
    assert.equal(out.new_sha256, sha256(content));
    assert.equal(out.written, true);
    assertGateResults(out.gates, ["has-ok"]);

    const file = join(p.root, "bin/run.sh");
    assert.equal(await Deno.readTextFile(file), content);
    const st = await Deno.lstat(file);
    assert.ok(st.isFile);
    assert.equal((st.mode ?? 0) & 0o7777, 0o755, "the mode was not kept");

    const [row] = await assertActed(p, b, ["bin/run.sh"], { rows: 1, attempts: 1, uses: 1 });
    assert.deepEqual(Object.keys(row).sort(), CHANGE_ROW_KEYS);
    assert.equal(row.action, "apply-proposal");
    assert.equal(row.agent, "worker");
    assert.equal(row.path, "bin/run.sh");
    assert.equal(row.base, sha256(SCRIPT));
    assert.equal(row.new, sha256(content));
    assert.equal(row.bytes, new TextEncoder().encode(content).length);
    assert.deepEqual(row.gates, out.gates);
    assert.equal(row.rationale, expectedRationale);
    // The dispatch the use was spent on: its tag, as its issue-dispatch row names it.
    const issued = (await ledgerRows(p.root)).find((r) => r.action === "issue-dispatch");
    assert.match(String(row.dispatch), /^[0-9a-f]{12}$/);
    assert.equal(row.dispatch, issued?.id);
  });
});

Deno.test("new files are 0644, new directories are made, deletions remove", async (t) => {
  await withProject(setup("create"), async (p) => {
    const nonce = await dispatch(p, "worker");
    await t.step("a new file (0644, base absent)", async () => {
      const content = "h\u00e9llo \u{1F600}\n";
      const b = await before(p);
      const out = assertApplied(await apply(p, change(nonce, "src/new.txt", content)));
      assert.equal(out.base_sha256, "absent");
      assert.equal(out.new_sha256, sha256(content));
      assert.deepEqual(out.gates, []);
      const st = await Deno.lstat(join(p.root, "src/new.txt"));
      assert.ok(st.isFile);
      assert.equal((st.mode ?? 0) & 0o7777, 0o644);
      assert.equal(await Deno.readTextFile(join(p.root, "src/new.txt")), content);
      const [row] = await assertActed(p, b, ["src/new.txt"], { rows: 1, attempts: 1, uses: 1 });
      assert.equal(row.base, "absent");
      assert.equal(row.bytes, 12); // h(1) é(2) "llo "(4) 😀(4) \n(1)
      assert.deepEqual(row.gates, []);
      assert.equal(row.rationale, "test");
    });
    await t.step("a new file in new directories, with glob and {path} gates", async () => {
      const content = "# guide\napproved\n";
      const b = await before(p);
      const out = assertApplied(
        await apply(
          p,
          change(nonce, "docs/a/b/guide.md", content, "absent", { gates: ["path-is-guide"] }),
        ),
      );
      // Declaration order of the brief: path-is-guide (requested) before docs-approved (glob).
      assertGateResults(out.gates, ["path-is-guide", "docs-approved"]);
      for (const d of ["docs/a", "docs/a/b"]) {
        const st = await Deno.lstat(join(p.root, d));
        assert.ok(st.isDirectory && !st.isSymlink, `${d} is not a real directory`);
      }
      const st = await Deno.lstat(join(p.root, "docs/a/b/guide.md"));
      assert.equal((st.mode ?? 0) & 0o7777, 0o644);
      assert.equal(await Deno.readTextFile(join(p.root, "docs/a/b/guide.md")), content);
      const [row] = await assertActed(p, b, ["docs/a", "docs/a/b", "docs/a/b/guide.md"], {
        rows: 1,
        attempts: 1,
        uses: 1,
      });
      assert.deepEqual(row.gates, out.gates);
    });
    await t.step("a deletion", async () => {
      const b = await before(p);
      const out = assertApplied(
        await apply(
          p,
          deletion(nonce, "src/old.txt", sha256("old\n"), { rationale: "  remove it \n" }),
        ),
      );
      assert.deepEqual(Object.keys(out).sort(), RESULT_KEYS);
      assert.equal(out.new_sha256, null);
      assert.equal(out.base_sha256, sha256("old\n"));
      assert.equal(out.written, true);
      assert.deepEqual(out.gates, []);
      assert.equal(await exists(join(p.root, "src/old.txt")), false);
      const [row] = await assertActed(p, b, ["src/old.txt"], { rows: 1, attempts: 1, uses: 1 });
      assert.deepEqual(Object.keys(row).sort(), DELETE_ROW_KEYS);
      assert.equal(row.action, "delete-proposal");
      assert.equal(row.agent, "worker");
      assert.equal(row.path, "src/old.txt");
      assert.equal(row.base, sha256("old\n"));
      assert.equal(row.rationale, "remove it");
    });
  });
});

Deno.test("--dry-run runs every check and gate, writes nothing, spends no use, records no row", async (t) => {
  await withProject(setup("dry"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const proposal = change(nonce, "src/a.txt", "ok now\n", sha256("hello\n"), {
      gates: ["has-ok"],
    });
    await t.step("a passing change: gates ran, written false, one attempt, no use", async () => {
      const b = await before(p);
      const out = assertApplied(await apply(p, proposal, { dryRun: true }));
      assert.deepEqual(Object.keys(out).sort(), RESULT_KEYS);
      assert.equal(out.written, false);
      assert.equal(out.new_sha256, sha256("ok now\n"));
      assertGateResults(out.gates, ["has-ok"]);
      assert.equal(await Deno.readTextFile(join(p.root, "src/a.txt")), "hello\n");
      await assertActed(p, b, [], { rows: 0, attempts: 1, uses: 0 });
    });
    await t.step("a new file in a new directory: nothing created", async () => {
      const b = await before(p);
      const out = assertApplied(
        await apply(p, change(nonce, "docs/x/y/new.md", "approved\n"), { dryRun: true }),
      );
      assertGateResults(out.gates, ["docs-approved"]);
      assert.equal(await exists(join(p.root, "docs/x")), false);
      await assertActed(p, b, [], { rows: 0, attempts: 1, uses: 0 });
    });
    await t.step("a deletion: the file stays", async () => {
      const b = await before(p);
      const out = assertApplied(
        await apply(p, deletion(nonce, "src/old.txt", sha256("old\n")), { dryRun: true }),
      );
      assert.equal(out.written, false);
      assert.equal(out.new_sha256, null);
      await assertActed(p, b, [], { rows: 0, attempts: 1, uses: 0 });
    });
    await t.step(
      "a gate that fails on the proposed content refuses the dry run (no row)",
      async () => {
        await expectRefusal(
          p,
          change(nonce, "src/a.txt", "nothing good\n", sha256("hello\n"), { gates: ["has-ok"] }),
          "GATE_FAILED",
          { agent: "worker", attempts: 1, dryRun: true },
        );
      },
    );
    await t.step("a stale base refuses the dry run (no row)", async () => {
      await expectRefusal(p, change(nonce, "src/a.txt", "ok\n", sha256("x")), "STALE_BASE", {
        agent: "worker",
        attempts: 1,
        dryRun: true,
      });
    });
    await t.step("a path rule refuses the dry run (no row)", async () => {
      await expectRefusal(p, change(nonce, ".git/config", "ok\n"), "CONTROL_PLANE", {
        agent: "worker",
        attempts: 1,
        dryRun: true,
      });
    });
    await t.step("an invalid artifact refuses the dry run (no row, no attempt)", async () => {
      await expectRefusal(p, { ...proposal, extra: 1 }, "ARTIFACT_INVALID", {
        agent: "?",
        attempts: 0,
        dryRun: true,
      });
    });
    await t.step("the same artifact applied for real afterwards: written, one use", async () => {
      const b = await before(p);
      const out = assertApplied(await apply(p, proposal));
      assert.equal(out.written, true);
      assert.equal(await Deno.readTextFile(join(p.root, "src/a.txt")), "ok now\n");
      await assertActed(p, b, ["src/a.txt"], { rows: 1, attempts: 1, uses: 1 });
    });
  });
});
