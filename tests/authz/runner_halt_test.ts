/**
 * The emergency stop and a HALT's finality through the runner (started with the flags
 * `agentteams permissions serve` prints, commands confined by real bwrap): a signed HALT on `*`
 * refuses the runner's dispatch, apply and run in queue mode, each refusal recorded and nothing
 * acted on; a legacy unsigned log put in its place with its own retraction (the runner holds no
 * decision key) lifts nothing under the switch, nor does an HMAC retraction (the runner holds no
 * decision key); the operator's Ed25519 retraction does. An agent-written verify key cannot get
 * that far: the runner refuses to start while the settings leave `references/` writable to
 * sessions (and with the rule, no session can write there); the key itself is refused under the
 * switch by the CLI's triad commands (tests/authz/trust_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256 } from "../_helpers/mod.ts";
import { withWorld, type World } from "../e2e/_run_helpers.ts";
import { change } from "../proposals/_helpers.ts";
import {
  OPERATOR_SETTINGS,
  runnerBrief,
  serveToEnd,
  withRunner,
} from "../runner/_runner_helpers.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { installedSigner } from "./_fixtures.ts";
import { signDecisionRow } from "../../lib/authz/decisions.ts";

const DK = { AGENTTEAMS_DECISION_SIGNING_KEY: "dk" };

function refusedCode(stderr: string): string | null {
  return /refused: ([A-Z_]+):/.exec(stderr)?.[1] ?? null;
}

async function sign(w: World, action: string, verdict: string, extra: string[] = []) {
  const r = await w.cli(
    [
      "decision",
      "sign",
      "--project",
      w.project,
      "--action",
      action,
      "--verdict",
      verdict,
      ...extra,
    ],
    { env: DK },
  );
  assert.equal(r.code, 0, r.stderr);
}

Deno.test("runner: a HALT on '*' stops dispatch, apply and run until the operator retracts it; an agent's legacy log or verify key lifts nothing", async () => {
  await withWorld("rq-halt", { brief: (p) => runnerBrief(p) }, async (w) => {
    await withRunner(w, async () => {
      const P = ["--project", w.project];
      const nonce = await w.dispatch();
      await sign(w, "*", "HALT");
      const halted = async (what: string, code = "HALTED") => {
        const d = await w.cli(["dispatch", "--agent", "worker", ...P]);
        assert.equal(refusedCode(d.stderr), code, `${what}: ${d.stderr}`);
        assert.equal(d.code, 1, what);
      };
      await halted("the signed HALT");
      const file = join(w.scratch, "p.json");
      await Deno.writeTextFile(
        file,
        JSON.stringify(
          change(
            nonce,
            "src/a.txt",
            "changed\n",
            sha256(Deno.readTextFileSync(join(w.project, "src/a.txt"))),
          ),
        ),
      );
      const before = Deno.readTextFileSync(join(w.project, "src/a.txt"));
      const a = await w.cli(["apply", file, ...P]);
      assert.equal(refusedCode(a.stderr), "HALTED", a.stderr);
      assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), before);
      const r = await w.run({ argv: ["true"], purpose: "p" }, { nonce });
      assert.equal(refusedCode(r.stderr), "HALTED", r.stderr);
      const refused = w.rows().map((x) => x.action).filter((x) => String(x).endsWith("-refused"));
      assert.ok(refused.includes("apply-proposal-refused"), JSON.stringify(refused));
      assert.ok(refused.includes("run-request-refused"), JSON.stringify(refused));

      // The agent's legacy log: the HALT kept, its own unsigned retraction after it.
      const log = join(w.project, "references", "security-decisions.log.csv");
      const signed = Deno.readTextFileSync(log);
      Deno.writeTextFileSync(
        log,
        "timestamp,requesting_agent,action_reviewed,verdict,conditions,conditions_verified\n" +
          "2026-11-01T00:00:00Z,security,*,HALT,,\n" +
          "2026-11-02T00:00:00Z,security,*,HALT-RETRACTED,all clear,verified\n",
      );
      // The rewrite no longer extends what the operator's HALT left: refused as such; with the
      // log's index removed too (.agentteams renamed away and back), the same: the anchor the
      // HALT's write left in the signed ledger holds the log, not the index.
      await halted("a legacy log in the signed log's place", "LEDGER_ROLLED_BACK");
      const index = join(w.project, ".agentteams", "csv-index-decisions.json");
      Deno.removeSync(index);
      await halted("a legacy log, the index removed", "LEDGER_ROLLED_BACK");
      assert.throws(() => Deno.statSync(index), Deno.errors.NotFound, "a read writes no index");

      // An HMAC retraction cannot be verified by the runner (it holds no decision key): the
      // HALT stands.
      Deno.writeTextFileSync(log, signed);
      await sign(w, "*", "HALT-RETRACTED", ["--evidence", "INC-7 closed"]);
      await halted("an HMAC retraction the runner cannot verify");
      // The operator's Ed25519 retraction (its key in the key dir, trusted for its id) lifts it.
      await sign(w, "*", "HALT-RETRACTED", ["--evidence", "INC-7 closed", "--ed25519"]);
      const d = await w.cli(["dispatch", "--agent", "worker", ...P]);
      assert.equal(d.code, 0, d.stderr);
    });
  });
});

Deno.test("runner: serve refuses to start while a session could plant a verify key (no Edit(./references/**)), naming the line to add; nothing made", async () => {
  await withWorld("rq-halt-plant", { brief: (p) => runnerBrief(p) }, async (w) => {
    await sign(w, "*", "HALT");
    // The operator's settings without the trust roots' rule: a session may write references/.
    const settings = JSON.parse(OPERATOR_SETTINGS) as { permissions: { deny: string[] } };
    settings.permissions.deny = settings.permissions.deny.filter((r) =>
      r !== "Edit(./references/**)"
    );
    await Deno.mkdir(join(w.project, ".claude"));
    await Deno.writeTextFile(join(w.project, ".claude", "settings.json"), JSON.stringify(settings));
    // The agent's own key and a signed, chained retraction with it.
    const agent = await installedSigner(w.project);
    await signDecisionRow(w.project, {
      action: "*",
      verdict: "HALT-RETRACTED",
      evidence: "all clear",
    }, { env: {}, now: new Date(), signer: agent });
    const before = snapshotTreeSync([w.project, w.home, w.keyDir]);
    const r = await serveToEnd(w);
    const refusal = assertCliRefused(r, "serve", "PREFLIGHT_FAILED", 1);
    assert.match(refusal.reason, /session-settings: /);
    assert.match(refusal.reason, /"Edit\(\.\/references\/\*\*\)" to \.claude\/settings\.json/);
    assertSameTree(before, snapshotTreeSync([w.project, w.home, w.keyDir]), "after serve");
  });
});
