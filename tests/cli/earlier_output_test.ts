/**
 * First contact (issue 14, item 17): invoked with the earlier tool's flag spellings, the CLI prints
 * what the earlier tool printed, so scripts that parse it keep working; the new spellings keep
 * their own output. Through the real CLI, in a committed project with real keys and bwrap.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initKeys } from "../../lib/crypto/keys.ts";
import { runCli, type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { workerProject } from "../_helpers/git.ts";
import { assertSameTree } from "../_helpers/assert.ts";

async function project(name: string): Promise<Sandbox> {
  const sb = await sandbox(name);
  await workerProject(sb.project, sb.home);
  await initKeys({ env: sb.env });
  return sb;
}

async function cli(sb: Sandbox, argv: string[]) {
  // A broad launch on purpose: stderr then holds only what the earlier tool printed.
  return await runCli([...argv, "--project", sb.project], {
    env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
  });
}

async function artifact(sb: Sandbox, name: string, body: Record<string, unknown>): Promise<string> {
  const file = join(sb.dir, name);
  await Deno.writeTextFile(file, JSON.stringify(body));
  return file;
}

Deno.test("--issue-dispatch prints the bare nonce; --apply-proposal the result object as indented ASCII JSON", async () => {
  const sb = await project("earlier-apply");
  try {
    const d = await cli(sb, ["--issue-dispatch", "--agent", "worker"]);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^[0-9a-f]{32}\n$/);
    const nonce = d.stdout.trim();
    const file = await artifact(sb, "p.json", {
      kind: "change-proposal",
      dispatch: nonce,
      path: "src/b.txt",
      base_sha256: "absent",
      content: "caf\u00e9\n",
      rationale: "earlier spelling",
    });
    const r = await cli(sb, ["--apply-proposal", file]);
    assert.equal(r.code, 0, r.stderr);
    const parsed = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(parsed), [
      "agent",
      "path",
      "base_sha256",
      "new_sha256",
      "gates",
      "written",
    ]);
    assert.equal(parsed.path, "src/b.txt");
    assert.equal(parsed.written, true);
    assert.match(r.stdout, /^\{\n {2}"agent": "worker",\n {2}"path": "src\/b\.txt",\n/);
    assert.equal(r.stdout, JSON.stringify(parsed, null, 2) + "\n");
    assert.equal(Deno.readTextFileSync(join(sb.project, "src/b.txt")), "caf\u00e9\n");
    // The new spelling keeps its own output.
    const again = await cli(sb, ["dispatch", "--agent", "worker"]);
    assert.match(again.stdout, /^[0-9a-f]{32}\n$/);
    // A refusal: the earlier command's name in brackets, the contract's exit code, no file
    // written (the ledger records the refusal and the spent use, as for the new spelling).
    const before = await snapshotTree(join(sb.project, "src"));
    const stale = await cli(sb, ["--apply-proposal", file]);
    assert.equal(stale.code, 1);
    assert.equal(stale.stdout, "");
    assert.match(stale.stderr, /^\[apply-proposal\] refused: STALE_BASE: src\/b\.txt exists/m);
    assert.doesNotMatch(stale.stderr, /agentteams apply: refused/);
    assertSameTree(before, await snapshotTree(join(sb.project, "src")), "after the refused apply");
  } finally {
    await sb.dispose();
  }
});

Deno.test("--run-request prints the result object without the streams; a refusal is [run-request] refused", async () => {
  const sb = await project("earlier-run");
  try {
    const nonce = (await cli(sb, ["--issue-dispatch", "--agent", "worker"])).stdout.trim();
    const file = await artifact(sb, "r.json", {
      kind: "command-request",
      dispatch: nonce,
      argv: ["true"],
      purpose: "earlier spelling",
    });
    const r = await cli(sb, ["--run-request", file]);
    assert.equal(r.code, 0, r.stderr);
    const parsed = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(parsed), [
      "agent",
      "argv",
      "exit",
      "duration_ms",
      "truncated",
      "undeclared_writes",
      "ran",
    ]);
    assert.deepEqual(parsed.argv, ["true"]);
    assert.equal(parsed.exit, 0);
    assert.equal(parsed.ran, true);
    const bad = await artifact(sb, "bad.json", {
      kind: "command-request",
      dispatch: nonce,
      argv: ["false"],
      purpose: "not registered",
    });
    const refused = await cli(sb, ["--run-request", bad]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, "");
    assert.match(refused.stderr, /^\[run-request\] refused: [A-Z_]+: /m);
  } finally {
    await sb.dispose();
  }
});

Deno.test("--verify-proposal-ledger: 'Proposal ledger: OK', or 'N problem(s)' with one ✗ line each on stderr", async () => {
  const sb = await project("earlier-verify");
  try {
    assert.equal((await cli(sb, ["--issue-dispatch", "--agent", "worker"])).code, 0);
    const ok = await cli(sb, ["--verify-proposal-ledger"]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, "Proposal ledger: OK\n");
    const ledger = join(sb.project, ".agentteams/proposal-ledger.jsonl");
    await Deno.writeTextFile(ledger, "not json\n", { append: true });
    const bad = await cli(sb, ["--verify-proposal-ledger"]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, "");
    const lines = bad.stderr.trimEnd().split("\n");
    const n = lines.length - 1;
    assert.ok(n >= 1, bad.stderr);
    assert.equal(lines[0], `Proposal ledger: ${n} problem(s)`);
    for (const l of lines.slice(1)) assert.match(l, /^ {2}\u2717 (row \d+|ledger): [A-Z_]+: /);
    assert.ok(lines.some((l) => /ROW_MALFORMED/.test(l)), bad.stderr);
    // The new spelling keeps its own.
    const plain = await cli(sb, ["ledger", "verify"]);
    assert.doesNotMatch(plain.stdout + plain.stderr, /Proposal ledger/);
  } finally {
    await sb.dispose();
  }
});
