/**
 * The library surface `applyProposal(artifact, {...})`, in-process, with the real confined gate
 * runner (bwrap). A dry run returns the result with `written: false`, runs the gates on the
 * proposed content (with `{file}` and `{path}` substituted), counts an attempt, spends no use,
 * records no row, creates no directory, and leaves the working directory alone; its refusals
 * record nothing either. Without its anchored-write helper a real apply refuses after the
 * write-ahead row and leaves the target alone. An unexpected (untyped) failure is recorded too,
 * as INTERNAL.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { ProposalError } from "../../lib/errors.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import type { Policy } from "../../lib/policy/types.ts";
import type { ApplyResult } from "../../lib/proposals/proposal.ts";
import { applyIn as applyProposal } from "../_helpers/acts.ts";
import type { GateRunner } from "../../lib/proposals/gates.ts";
import { type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import {
  counts,
  exists,
  ledgerLines,
  ledgerRows,
  policyIn,
  sandboxGateRunner,
  sha256,
  storeLines,
} from "./_helpers.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";

const BRIEF = JSON.stringify({
  agent_policies: { worker: { write_scopes: ["src/"] } },
  proposal_gates: {
    "has-ok": { argv: ["/usr/bin/grep", "-q", "ok", "{file}"] },
    "path-is": { argv: ["/usr/bin/test", "{path}", "=", "src/new/x.txt"] },
    "any-txt": { glob: "*.txt", argv: ["/usr/bin/true"] },
  },
});

interface World {
  sb: Sandbox;
  policy: Policy;
  hmac: HmacKey;
  nonce: string;
  gateRunner: GateRunner;
}

async function world(): Promise<World> {
  const sb = await sandbox("prop-drylib");
  const policy = policyIn(sb, BRIEF);
  const hmac = new HmacKey(crypto.getRandomValues(new Uint8Array(32)));
  const { nonce } = await issueDispatch(sb.project, hmac, "worker");
  const gateRunner = sandboxGateRunner(sb, policy);
  return { sb, policy, hmac, nonce, gateRunner };
}

function dry(w: World, artifact: Record<string, unknown>): Promise<ApplyResult> {
  return applyProposal(artifact, {
    root: w.sb.project,
    policy: w.policy,
    hmac: w.hmac,
    dryRun: true,
    gateRunner: w.gateRunner,
  });
}

function proposal(w: World, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: "change-proposal",
    dispatch: w.nonce,
    path: "src/new/x.txt",
    base_sha256: "absent",
    content: "ok\n",
    rationale: "r",
    ...extra,
  };
}

Deno.test("applyProposal dry run: result, gates on the content, no write, no row, no use", async () => {
  const w = await world();
  try {
    const cwd = Deno.cwd();
    const ledger = await ledgerLines(w.sb.project);
    const r = await dry(w, proposal(w, { gates: ["path-is", "has-ok"] }));
    assert.equal(Deno.cwd(), cwd, "a dry run moved the working directory");
    assert.equal(r.agent, "worker");
    assert.equal(r.path, "src/new/x.txt");
    assert.equal(r.base_sha256, "absent");
    assert.equal(r.new_sha256, sha256("ok\n"));
    assert.equal(r.written, false);
    // Brief order: has-ok, path-is (requested), any-txt (glob).
    assert.deepEqual(r.gates.map((g) => [g.gate, g.exit, g.confined, g.backend]), [
      ["has-ok", 0, true, "bwrap"],
      ["path-is", 0, true, "bwrap"],
      ["any-txt", 0, true, "bwrap"],
    ]);
    assert.equal(await exists(join(w.sb.project, "src")), false, "a directory was created");
    assert.deepEqual(await ledgerLines(w.sb.project), ledger, "a dry run recorded a row");
    assert.deepEqual(counts(await storeLines(w.sb.project)), { attempts: 1, uses: 0 });
  } finally {
    await w.sb.dispose();
  }
});

Deno.test("applyProposal dry run refusals record nothing", async (t) => {
  const w = await world();
  try {
    const cases: [string, Record<string, unknown>, string, number][] = [
      // [name, artifact, code, attempts counted]
      [
        "the gate sees the proposal",
        proposal(w, { content: "bad\n", gates: ["has-ok"] }),
        "GATE_FAILED",
        1,
      ],
      [
        "{path} is the proposal's path",
        proposal(w, { path: "src/other.txt", gates: ["path-is"] }),
        "GATE_FAILED",
        1,
      ],
      ["an unknown gate", proposal(w, { gates: ["nope"] }), "UNKNOWN_GATE", 1],
      ["out of scope", proposal(w, { path: "lib/x.txt" }), "OUT_OF_SCOPE", 1],
      ["a claimed agent mismatch", proposal(w, { agent: "reader" }), "AGENT_MISMATCH", 1],
      ["a forged nonce", proposal(w, { dispatch: "f".repeat(32) }), "DISPATCH_UNKNOWN", 0],
      ["an unknown field", proposal(w, { extra: true }), "ARTIFACT_INVALID", 0],
    ];
    for (const [name, artifact, code, attempts] of cases) {
      await t.step(`${name} (${code})`, async () => {
        const ledger = await ledgerLines(w.sb.project);
        const store = await storeLines(w.sb.project);
        await assertRefusal(() => dry(w, artifact), code);
        assert.deepEqual(
          await ledgerLines(w.sb.project),
          ledger,
          "a dry-run refusal recorded a row",
        );
        const added = (await storeLines(w.sb.project)).slice(store.length);
        assert.deepEqual(counts(added), { attempts, uses: 0 });
        assert.equal(await exists(join(w.sb.project, "src")), false);
      });
    }
  } finally {
    await w.sb.dispose();
  }
});

Deno.test("applyProposal without its write helper refuses WRITE_UNAVAILABLE after the write-ahead row; the target is untouched", async () => {
  const w = await world();
  try {
    const src = join(w.sb.project, "src");
    await Deno.mkdir(src);
    await Deno.writeTextFile(join(src, "a.txt"), "hello\n");
    const tree = await snapshotTree(src);
    const rowsBefore = (await ledgerRows(w.sb.project)).length;
    const artifact = proposal(w, {
      path: "src/a.txt",
      base_sha256: sha256("hello\n"),
      content: "pwned\n",
    });
    await assertRefusal(
      () =>
        applyProposal(artifact, {
          root: w.sb.project,
          policy: w.policy,
          hmac: w.hmac,
          gateRunner: w.gateRunner,
          perl: join(w.sb.dir, "no-such-perl"),
        }),
      "WRITE_UNAVAILABLE",
      ProposalError,
    );
    assertSameTree(tree, await snapshotTree(src), "src after WRITE_UNAVAILABLE");
    const rows = (await ledgerRows(w.sb.project)).slice(rowsBefore);
    assert.deepEqual(rows.map((r) => [r.action, r.code ?? null]), [
      ["apply-proposal", null],
      ["apply-proposal-refused", "WRITE_UNAVAILABLE"],
    ]);
  } finally {
    await w.sb.dispose();
  }
});

Deno.test("applyProposal: an unexpected failure is recorded as INTERNAL with the agent, nothing written", async () => {
  const w = await world();
  try {
    const rowsBefore = (await ledgerRows(w.sb.project)).length;
    const boom = new Error("gate runner broke");
    await assert.rejects(
      applyProposal(proposal(w), {
        root: w.sb.project,
        policy: w.policy,
        hmac: w.hmac,
        gateRunner: () => Promise.reject(boom),
      }),
      (e: unknown) => e === boom,
    );
    assert.equal(await exists(join(w.sb.project, "src")), false, "a directory was created");
    const rows = (await ledgerRows(w.sb.project)).slice(rowsBefore);
    assert.deepEqual(rows.map((r) => [r.action, r.agent, r.code]), [
      ["apply-proposal-refused", "worker", "INTERNAL"],
    ]);
    assert.deepEqual(counts(await storeLines(w.sb.project)), { attempts: 1, uses: 0 });
  } finally {
    await w.sb.dispose();
  }
});

Deno.test("applyProposal: two applies of one base at once never both write (the second would undo the first); the loser is STALE_BASE", async () => {
  const w = await world();
  try {
    const target = join(w.sb.project, "src/a.md");
    await Deno.mkdir(join(w.sb.project, "src"));
    await Deno.writeTextFile(target, "round 0\n");
    for (let round = 1; round <= 16; round++) {
      const base = sha256(await Deno.readTextFile(target));
      // Each apply spends a use before its write: a fresh nonce per round.
      const { nonce } = await issueDispatch(w.sb.project, w.hmac, "worker");
      const apply = (who: string) =>
        applyProposal(
          proposal(w, {
            dispatch: nonce,
            path: "src/a.md",
            base_sha256: base,
            content: `${who} ${round}\n`,
          }),
          { root: w.sb.project, policy: w.policy, hmac: w.hmac, gateRunner: w.gateRunner },
        );
      const results = await Promise.allSettled([apply("left"), apply("right")]);
      const wrote = results.filter((r) => r.status === "fulfilled");
      assert.equal(wrote.length, 1, `round ${round}: ${wrote.length} applies wrote`);
      const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      assert.ok(
        lost.reason instanceof ProposalError && lost.reason.code === "STALE_BASE",
        String(lost.reason),
      );
      const winner = results.indexOf(wrote[0]) === 0 ? "left" : "right";
      assert.equal(await Deno.readTextFile(target), `${winner} ${round}\n`);
    }
  } finally {
    await w.sb.dispose();
  }
});
