/**
 * Capability grants under the narrow flags (issue 23 item 4): with write grants in the project's
 * `references/capability-grants.log.csv` (valid, expired, HALTed, too broad), the line
 * `agentteams permissions apply` prints runs a gated apply as printed, and names no root of a
 * grant the tool does not accept; the same for `permissions run`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initKeys, loadLedgerKey } from "../../lib/crypto/keys.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import { importPublicPem, keyIdOfKey } from "../../lib/crypto/ed25519.ts";
import { within } from "../../lib/fs/within.ts";
import { workerProject } from "../_helpers/git.ts";
import { baseChildEnv, runCli, type RunResult, type Sandbox, sandbox } from "../_helpers/mod.ts";
import { grantFieldArgs, grantFields } from "../authz/_fixtures.ts";
import { appendGrant } from "../../lib/authz/grants.ts";
import { operatorSigner } from "../../lib/authz/signed.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import {
  allowList as runnerAllow,
  installTeamDir as runnerTeamDir,
  permissionsArgs,
  runnerBrief,
  withRunner,
} from "../runner/_runner_helpers.ts";

/** The list `line` gives `--allow-<flag>=` (empty when the flag is absent). */
function allowList(line: string, flag: string): string[] {
  const m = line.match(new RegExp(`--allow-${flag}=(\\S+)`));
  return m === null ? [] : m[1].split(",");
}

/** Runs a command line through a shell, exactly as printed, with the sandbox's environment. */
async function sh(sb: Sandbox, line: string): Promise<RunResult> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", line],
    cwd: sb.dir,
    clearEnv: true,
    env: { ...baseChildEnv(), ...sb.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    signal: out.signal,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/** The one line `agentteams permissions WORDS --project P -- EXTRA` prints. */
async function permissionsLine(sb: Sandbox, words: string[], extra: string[]): Promise<string> {
  const r = await runCli(["permissions", ...words, "--project", sb.project, "--", ...extra], {
    env: sb.env,
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 1, r.stdout);
  return lines[0];
}

/** Whether any entry of `list` covers `path`. */
function covered(list: string[], path: string): boolean {
  return list.some((e) => within(path, e));
}

/** The operator's Ed25519 verify key on the project's team dir roster (alice approves). */
async function installTeamDir(sb: Sandbox): Promise<void> {
  const team = join(sb.project, ".agentteams", "team", "references");
  await Deno.mkdir(join(team, "authorized-verify-keys"), { recursive: true });
  await Deno.writeTextFile(join(team, "security-approvers.txt"), "alice\n");
  const pem = await Deno.readTextFile(join(sb.keyDir, "operator-ed25519.pub.pem"));
  const id = await keyIdOfKey(await importPublicPem(pem));
  await Deno.writeTextFile(join(team, "authorized-verify-keys", `${id}.pub.pem`), pem);
}

/** `grant sign` through the CLI: a write grant of `target` under `issuerRoot`. */
async function signGrant(
  sb: Sandbox,
  id: string,
  target: string,
  issuerRoot: string,
) {
  const fields = grantFieldArgs(target, issuerRoot, "holder");
  const r = await runCli([
    "grant",
    "sign",
    "--project",
    sb.project,
    "--id",
    id,
    "--ops",
    "write",
    ...fields,
  ], { env: sb.env });
  assert.equal(r.code, 0, r.stderr);
}

/** A worker project with keys, a gate, a private TMPDIR and the operator on the roster. */
async function gatedProject(sb: Sandbox): Promise<void> {
  await workerProject(sb.project, sb.home);
  const path = join(sb.project, "agentteams.json");
  const brief = JSON.parse(await Deno.readTextFile(path));
  brief.proposal_gates = { t: { glob: "src/*.txt", argv: ["/usr/bin/true", "{file}"] } };
  await Deno.writeTextFile(path, JSON.stringify(brief));
  const tmp = join(sb.dir, "tmp");
  await Deno.mkdir(tmp);
  Object.assign(sb.env, { TMPDIR: tmp });
  await initKeys({ env: sb.env });
  await installTeamDir(sb);
}

/** A change proposal for `src/NAME.txt` under a fresh dispatch. */
async function proposal(sb: Sandbox, name: string): Promise<string> {
  const key = loadLedgerKey({ env: sb.env, mode: "direct" });
  const nonce = (await issueDispatch(sb.project, key.hmac, "worker")).nonce;
  const file = join(sb.dir, `${name}.json`);
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      kind: "change-proposal",
      dispatch: nonce,
      path: `src/${name}.txt`,
      base_sha256: "absent",
      content: "gated\n",
      rationale: "t",
    }),
  );
  return file;
}

/** Applies a fresh proposal through the printed line; asserts it ran and wrote. */
async function applyAsPrinted(sb: Sandbox, name: string): Promise<string> {
  const line = await permissionsLine(sb, ["apply"], [await proposal(sb, name)]);
  const r = await sh(sb, line);
  assert.equal(r.code, 0, `${line}\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /NOT_CAPABLE/);
  assert.equal(await Deno.readTextFile(join(sb.project, `src/${name}.txt`)), "gated\n");
  return line;
}

Deno.test("a gated apply under the printed flags with write grants present: valid, too broad, HALTed; the line names only the accepted grant's root", async (t) => {
  const sb = await sandbox("perm-grants-apply");
  try {
    await gatedProject(sb);
    const issuer = join(sb.dir, "issuer");
    const shared = join(issuer, "docs", "shared");
    await Deno.mkdir(shared, { recursive: true });

    await t.step("no grants: applies as printed", async () => {
      const line = await applyAsPrinted(sb, "none");
      assert.ok(!covered(allowList(line, "read"), issuer), line);
    });

    await t.step("a valid write grant: applies as printed", async () => {
      await signGrant(sb, "G-1", "docs/shared", issuer);
      const line = await applyAsPrinted(sb, "valid");
      // The gate is checked against the root, which the act resolves: read, never written.
      assert.ok(allowList(line, "read").includes(shared), line);
      assert.ok(!covered(allowList(line, "write"), shared), line);
      // Not the issuer's workspace: only the root.
      assert.ok(!allowList(line, "read").includes(issuer), line);
    });

    await t.step(
      "permissions apply, itself under its own narrow line, prints the same line",
      async () => {
        const file = await proposal(sb, "asked");
        const outer = await runCli(["permissions", "permissions", "--", "apply", file], {
          env: sb.env,
          cwd: sb.project,
        });
        assert.equal(outer.code, 0, outer.stderr);
        const r = await sh(sb, outer.stdout.trim());
        assert.equal(r.code, 0, `${outer.stdout}\n${r.stderr}`);
        assert.doesNotMatch(r.stderr, /NOT_CAPABLE/);
        assert.equal(r.stdout.trim(), await permissionsLine(sb, ["apply"], [file]));
      },
    );

    await t.step(
      "a too-broad grant (its root holds the project): adds nothing to the line",
      async () => {
        await signGrant(sb, "G-2", ".", sb.dir);
        const line = await applyAsPrinted(sb, "broad");
        assert.ok(!allowList(line, "read").includes(sb.dir), line);
      },
    );

    await t.step("an expired grant: adds nothing to the line, applies as printed", async () => {
      const old = join(issuer, "docs", "old");
      await Deno.mkdir(old);
      // Signed while it was valid (the library takes the clock; `grant sign` refuses a past expiry).
      await appendGrant(
        sb.project,
        join(sb.project, ".agentteams", "team"),
        grantFields({
          grantId: "G-3",
          holderTeam: "holder",
          targetPath: "docs/old",
          expiresAt: "2020-01-01T00:00:00Z",
          issuerRoot: issuer,
        }),
        { env: sb.env, now: new Date("2019-06-01T00:00:00Z") },
        await operatorSigner(sb.env),
      );
      const line = await applyAsPrinted(sb, "expired");
      assert.ok(!covered(allowList(line, "read"), old), line);
      assert.ok(allowList(line, "read").includes(shared), line);
    });

    await t.step("a HALT on the valid grant's write: applies as printed", async () => {
      const halt = await runCli([
        "decision",
        "sign",
        "--project",
        sb.project,
        "--action",
        "write:docs/shared",
        "--verdict",
        "HALT",
      ], { env: { ...sb.env, AGENTTEAMS_DECISION_SIGNING_KEY: "dk" } });
      assert.equal(halt.code, 0, halt.stderr);
      const line = await applyAsPrinted(sb, "halted");
      assert.ok(!covered(allowList(line, "read"), shared), line);
    });

    await t.step("run of a command request with the grants present: runs as printed", async () => {
      const key = loadLedgerKey({ env: sb.env, mode: "direct" });
      const nonce = (await issueDispatch(sb.project, key.hmac, "worker")).nonce;
      const file = join(sb.dir, "request.json");
      await Deno.writeTextFile(
        file,
        JSON.stringify({
          kind: "command-request",
          dispatch: nonce,
          argv: ["true"],
          purpose: "t",
        }),
      );
      const line = await permissionsLine(sb, ["run"], [file]);
      assert.ok(!allowList(line, "read").includes(sb.dir), line);
      const r = await sh(sb, line);
      assert.equal(r.code, 0, `${line}\n${r.stderr}`);
      assert.doesNotMatch(r.stderr, /NOT_CAPABLE/);
    });
  } finally {
    await sb.dispose();
  }
});

Deno.test("the runner under the printed serve flags with grants it accepts and grants it does not (too broad, HALTed, expired): a gated apply through the queue is applied", async () => {
  await withWorld("perm-grants-serve", {
    brief: (p) => ({
      ...runnerBrief(p),
      proposal_gates: { t: { glob: "src/*.txt", argv: ["/usr/bin/true", "{file}"] } },
    }),
  }, async (w) => {
    const issuer = join(w.dir, "issuer");
    const shared = join(issuer, "docs", "shared");
    await Deno.mkdir(shared, { recursive: true });
    await runnerTeamDir(w);
    const open = join(issuer, "docs", "open");
    await Deno.mkdir(open);
    for (
      const [id, target, root] of [
        ["G-1", "docs/shared", issuer],
        ["G-2", ".", w.dir],
        ["G-3", "docs/open", issuer],
      ]
    ) {
      const r = await w.cli([
        "grant",
        "sign",
        "--project",
        w.project,
        "--id",
        id,
        "--ops",
        "write",
        ...grantFieldArgs(target, root, "holder"),
      ]);
      assert.equal(r.code, 0, r.stderr);
    }
    // Expired: signed while it was valid (the library takes the clock).
    const old = join(issuer, "docs", "old");
    await Deno.mkdir(old);
    await appendGrant(
      w.project,
      join(w.project, ".agentteams", "team"),
      grantFields({
        grantId: "G-4",
        holderTeam: "holder",
        targetPath: "docs/old",
        expiresAt: "2020-01-01T00:00:00Z",
        issuerRoot: issuer,
      }),
      { env: w.env, now: new Date("2019-06-01T00:00:00Z") },
      await operatorSigner(w.env),
    );
    const halt = await w.cli(
      [
        "decision",
        "sign",
        "--project",
        w.project,
        "--action",
        "write:docs/shared",
        "--verdict",
        "HALT",
      ],
      { env: { AGENTTEAMS_DECISION_SIGNING_KEY: "dk" } },
    );
    assert.equal(halt.code, 0, halt.stderr);
    const args = await permissionsArgs(w, ["serve", "--project", w.project]);
    // G-3 is accepted (its root written, its issuer read); G-1 (HALTed) and G-2 (too broad) add
    // nothing of their own: the too-broad root is in no list, and G-1's root is written by none.
    assert.ok(runnerAllow(args, "write").includes(open), args.join(" "));
    assert.ok(!runnerAllow(args, "write").some((e) => within(shared, e)), args.join(" "));
    assert.ok(!runnerAllow(args, "read").includes(w.dir), args.join(" "));
    assert.ok(!runnerAllow(args, "write").includes(w.dir), args.join(" "));
    assert.ok(!runnerAllow(args, "write").some((e) => within(old, e)), args.join(" "));
    await withRunner(w, async () => {
      const nonce = await w.dispatch();
      const file = join(w.dir, "p.json");
      await Deno.writeTextFile(
        file,
        JSON.stringify({
          kind: "change-proposal",
          dispatch: nonce,
          path: "src/queued.txt",
          base_sha256: "absent",
          content: "gated\n",
          rationale: "t",
        }),
      );
      const r = await w.cli(["apply", file, "--project", w.project]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /NOT_CAPABLE/);
    });
    assert.equal(await Deno.readTextFile(join(w.project, "src", "queued.txt")), "gated\n");
  });
});
