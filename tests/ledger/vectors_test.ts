/**
 * Compatibility with the earlier Python implementation: its files (tests/testdata/vectors, copied
 * byte for byte from ../shared/vectors; see tests/testdata/README.md; copied again into a temporary
 * directory before anything changes them) verify with this project's verifier as EXPECTED.json says, and after this
 * project appends to them they still verify both with our verifier and with an independent
 * re-check written here (node:crypto HMAC over a re-statement of json.dumps).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendRow } from "../../lib/ledger/append.ts";
import { resolveDispatch } from "../../lib/ledger/dispatch.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import {
  copyTree,
  hmacHex,
  keyOf,
  pyDumps,
  REPO_ROOT,
  runCli,
  type Sandbox,
  sandbox,
  sha256,
  stateFiles,
  writeBrief,
} from "../_helpers/mod.ts";

const VECTORS_ROOT = join(REPO_ROOT, "tests", "testdata", "vectors");
const VECTORS = join(VECTORS_ROOT, "python-agentteams-p1");

interface Vector {
  name: string;
  key: string;
  valid: boolean;
}

async function loadVector(name: string): Promise<Vector> {
  const dir = join(VECTORS, name);
  const keyFile = await Deno.readTextFile(join(dir, "KEY")).catch((e) => {
    throw new Error(`the compatibility vectors are missing from ${VECTORS}: ${e}`);
  });
  assert.ok(keyFile.endsWith("\n"));
  const expected = JSON.parse(await Deno.readTextFile(join(dir, "EXPECTED.json")));
  return { name, key: keyFile.slice(0, -1), valid: expected.valid };
}

/** A sandbox holding a writable copy of the vector as its project (no key file anywhere). */
async function withVector(name: string, fn: (sb: Sandbox, v: Vector) => Promise<void>) {
  const v = await loadVector(name);
  const sb = await sandbox(`vector-${name}`);
  try {
    await copyTree(join(VECTORS, name, ".agentteams"), join(sb.project, ".agentteams"));
    await fn(sb, v);
  } finally {
    await sb.dispose();
  }
}

function cliEnv(sb: Sandbox, v: Vector): Record<string, string> {
  return { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: v.key };
}

/**
 * The earlier tool's verification, re-stated independently: every line canonical, its MAC over
 * the canonical body, `prev` = SHA-256 of the previous line; the head's MAC over {count, last}
 * and its agreement with the ledger; every dispatch-store line's MAC. Returns the first failure.
 */
async function independentCheck(project: string, key: string): Promise<string | null> {
  const p = stateFiles(project);
  const text = await Deno.readTextFile(p.ledger);
  if (!text.endsWith("\n")) return "the ledger does not end with a newline";
  const lines = text.slice(0, -1).split("\n");
  let prev = "";
  for (let i = 0; i < lines.length; i++) {
    const row = JSON.parse(lines[i]);
    const { mac, ...body } = row;
    if (pyDumps(row) !== lines[i]) return `row ${i + 1} is not json.dumps(sort_keys=True)`;
    if (hmacHex(key, pyDumps(body)) !== mac) return `row ${i + 1}: MAC`;
    if (body.prev !== prev) return `row ${i + 1}: prev`;
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/.test(body.time)) return `row ${i + 1}: time`;
    prev = sha256(lines[i]);
  }
  const headText = await Deno.readTextFile(p.head).catch(() => null);
  if (headText === null) return "no head";
  const head = JSON.parse(headText.trim());
  if (Object.keys(head).sort().join() !== "count,last,mac") return "head keys";
  if (hmacHex(key, pyDumps({ count: head.count, last: head.last })) !== head.mac) return "head MAC";
  if (head.count !== lines.length) return "head count";
  if (head.last !== (lines.length === 0 ? null : prev)) return "head last";
  const store = await Deno.readTextFile(p.dispatches).catch(() => "");
  for (const [i, line] of store.split("\n").filter((l) => l !== "").entries()) {
    const row = JSON.parse(line);
    const { mac, ...body } = row;
    if (pyDumps(row) !== line || hmacHex(key, pyDumps(body)) !== mac) {
      return `dispatch store line ${i + 1}`;
    }
  }
  return null;
}

Deno.test("vectors: our verifier gives EXPECTED.json's verdict, with the specific codes", async (t) => {
  const codes: Record<string, [string, number | null]> = {
    "edited-row": ["ROW_MAC_INVALID", 4],
    "removed-row": ["ROWS_REMOVED", 2],
    "no-head": ["HEAD_MISSING", null],
  };
  for (const name of ["intact", "edited-row", "removed-row", "no-head"]) {
    await t.step(name, () =>
      withVector(name, async (sb, v) => {
        // In process.
        const report = verifyLedgerAt(sb.project, keyOf(v.key));
        assert.equal(report.ok, v.valid);
        if (name === "intact") assert.equal(report.rows, 11);
        else assert.deepEqual([report.problems[0].code, report.problems[0].row], codes[name]);
        // Through the CLI, key from the environment, no key file.
        const r = await runCli(["ledger", "verify", "--project", sb.project, "--json"], {
          env: cliEnv(sb, v),
        });
        assert.equal(r.code, v.valid ? 0 : 1, r.stderr);
        const out = JSON.parse(r.stdout);
        assert.equal(out.ok, v.valid);
        if (!v.valid) {
          assert.deepEqual([out.error.code, out.error.row], codes[name]);
          assert.match(
            r.stderr,
            new RegExp(`^agentteams ledger verify: refused: ${codes[name][0]}: `, "m"),
          );
        }
        // The independent re-check agrees.
        assert.equal((await independentCheck(sb.project, v.key)) === null, v.valid);
      }));
  }
});

Deno.test("vectors: the intact ledger extended by this project (dispatch, uses, rows) still verifies, both ways", async () => {
  await withVector("intact", async (sb, v) => {
    const p = stateFiles(sb.project);
    const original = await Deno.readTextFile(p.ledger);
    const lastOld = sha256(original.slice(0, -1).split("\n").pop() as string);

    writeBrief(sb.project);
    const r = await runCli(["dispatch", "--agent", "worker", "--project", sb.project], {
      env: cliEnv(sb, v),
    });
    assert.equal(r.code, 0, r.stderr);
    const nonce = r.stdout.trim();
    assert.match(nonce, /^[0-9a-f]{32}$/);
    const key = keyOf(v.key);
    assert.equal(
      await resolveDispatch(sb.project, key.hmac, nonce, { count: "attempt" }).then((d) => d.agent),
      "worker",
    );
    await resolveDispatch(sb.project, key.hmac, nonce, { count: "use" });
    await appendRow(sb.project, key.hmac, {
      action: "apply-proposal",
      agent: "worker",
      base: "absent",
      bytes: 3,
      gates: [],
      new: sha256("hi\n"),
      path: "docs/caf\u00e9.md",
      rationale: 'from the Deno port: \u2603 \u{1f600} "q" \\ \t',
    });
    await appendRow(sb.project, key.hmac, {
      action: "note",
      agent: "worker",
      n: -9007199254740991,
    });

    const after = await Deno.readTextFile(p.ledger);
    assert.ok(after.startsWith(original), "the earlier rows are untouched");
    const added = after.slice(original.length).slice(0, -1).split("\n").map((l) => JSON.parse(l));
    assert.equal(added.length, 3);
    assert.equal(added[0].action, "issue-dispatch");
    assert.equal(added[0].prev, lastOld);
    assert.equal(added[0].id, hmacHex(v.key, "dispatch:" + nonce).slice(0, 12));

    assert.equal(await independentCheck(sb.project, v.key), null);
    const report = verifyLedgerAt(sb.project, key);
    assert.equal(report.ok, true);
    assert.equal(report.rows, 14);
    const cli = await runCli(["ledger", "verify", "--project", sb.project], { env: cliEnv(sb, v) });
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^ok: 14 rows verify$/m);
  });
});

Deno.test("vectors: the independent re-check is not vacuous (it rejects what it should)", async () => {
  await withVector("intact", async (sb, v) => {
    assert.equal(await independentCheck(sb.project, v.key), null);
    assert.notEqual(await independentCheck(sb.project, v.key + "x"), null);
    const p = stateFiles(sb.project);
    const text = await Deno.readTextFile(p.ledger);
    await Deno.writeTextFile(p.ledger, text.replace("a new file", "a new File"));
    assert.equal(await independentCheck(sb.project, v.key), "row 4: MAC");
  });
});

/** Every file under `dir`, as paths relative to it with `/` separators. */
async function filesUnder(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(join(dir, prefix))) {
    const rel = prefix === "" ? e.name : `${prefix}/${e.name}`;
    if (e.isDirectory) out.push(...await filesUnder(dir, rel));
    else out.push(rel);
  }
  return out;
}

Deno.test("vectors: the copies are byte-identical to SHA256SUMS, which lists every one of them", async () => {
  const sums = new Map<string, string>();
  for (const line of (await Deno.readTextFile(join(VECTORS_ROOT, "SHA256SUMS"))).split("\n")) {
    if (line === "") continue;
    const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    assert.ok(m, `SHA256SUMS line: ${JSON.stringify(line)}`);
    sums.set(m[2], m[1]);
  }
  const files = (await filesUnder(VECTORS_ROOT)).filter((f) => f !== "SHA256SUMS").sort();
  assert.deepEqual(files, [...sums.keys()].sort());
  assert.equal(files.length, 19);
  for (const f of files) {
    assert.equal(sha256(await Deno.readFile(join(VECTORS_ROOT, f))), sums.get(f), f);
  }
});
