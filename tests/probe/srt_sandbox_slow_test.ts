/**
 * Issue 22, Q6/Q7 residuals, judged inside Claude Code's real sandbox. A session's Bash runs in
 * `@anthropic-ai/sandbox-runtime` 0.0.83 (bubblewrap on Linux), which `doctor` requires, with the
 * deny rules `agentteams init` writes turned into its lists as Claude Code turns them
 * (`tests/probe/_srt_driver.ts`). Each trick the residual-risk notes assumed a session's shell
 * could play is tried there against a project made by `keys init`, `init` and an operator's HALT:
 *
 * - (a) a second name for a trust root: `ln` of the decision log or the brief to `src/` is refused
 *   `EXDEV` (each denied path is a read-only bind mount of its own, and `link(2)` never crosses
 *   mounts), and a write through the path is `EROFS`.
 * - (b) a trust-root folder renamed away (and back): `EBUSY`, each folder being a mount point.
 * - (c) a trust-root folder made before the operator's tool makes it: the runtime mounts an empty
 *   read-only placeholder at an absent write-denied path for as long as the command runs
 *   (`mountPointFor` in `dist/sandbox/linux-sandbox-utils.js`), so `mkdir`, `ln -s` and a file
 *   there fail; the placeholder is gone after the command, and a background process does not
 *   outlive it (`--unshare-pid`). `.agentteams-queue/` is read-denied only, and a read deny of an
 *   absent path hides nothing: the session can make that folder itself.
 *
 * - The folders above a deeper trust root are pinned (self-bound), so none is moved aside.
 *
 * Also pinned, a finding that changed the rules: a read-denied folder that exists is a private
 * tmpfs inside the sandbox, so under `Read(./.agentteams-queue/**)` (which an earlier init wrote)
 * what a sandboxed command writes into the queue never reaches the host and the orchestrator's
 * `agentteams dispatch` there refuses `NO_RUNNER`. No rule asks for it now (requests are sealed
 * to the runner): with init's rules the write arrives (docs/session-settings.md).
 *
 * The runtime needs bwrap, socat and ripgrep; when it cannot start the test fails.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertSameTree } from "../_helpers/assert.ts";
import { REPO_ROOT, runCli, runDeno, sandbox, snapshotTree } from "../_helpers/mod.ts";
import type { RunResult } from "../_helpers/mod.ts";

const DRIVER = join(REPO_ROOT, "tests", "probe", "_srt_driver.ts");

/** Runs `script` in Claude Code's sandbox with the project as cwd; fails when it cannot start. */
async function inSandbox(
  sb: { project: string; env: Record<string, string> },
  script: string,
): Promise<RunResult> {
  const r = await runDeno(
    ["run", "-A", `--lock=${join(REPO_ROOT, "tests", "deno.lock")}`, DRIVER, script],
    { cwd: sb.project, env: sb.env },
  );
  assert.notEqual(r.code, 99, `Claude Code's sandbox did not start:\n${r.stderr}`);
  return r;
}

/** The `name=code` lines a script printed, as a map. */
function outcomes(r: RunResult): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of r.stdout.matchAll(/^([a-z.-]+)=(\S*)$/gm)) out.set(m[1], m[2]);
  return out;
}

/** A project switched on by the operator: keys, `init`, and a HALT on every act. */
async function haltedProject(prefix: string) {
  const sb = await sandbox(prefix);
  const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
  assert.equal((await runCli(["keys", "init"], { env })).code, 0);
  const P = ["--project", sb.project];
  const init = await runCli(["init", ...P], { env });
  assert.equal(init.code, 0, init.stdout + init.stderr);
  const halt = await runCli(
    ["decision", "sign", ...P, "--action", "*", "--verdict", "HALT", "--ed25519"],
    { env },
  );
  assert.equal(halt.code, 0, halt.stderr);
  await Deno.mkdir(join(sb.project, "src"));
  return { sb, env, P };
}

Deno.test("Claude's sandbox: a trust root cannot get a second name, be written, or be renamed away", async () => {
  const { sb, env, P } = await haltedProject("srt-ab");
  try {
    // The runner's folders, as `serve` makes them.
    await Deno.mkdir(join(sb.project, ".agentteams-queue"));
    await Deno.mkdir(join(sb.project, ".agentteams-status"));
    // Not `.agentteams-queue/`: sessions write it by design (its requests are sealed to the
    // runner; a serving runner's pin stops it when the folder is swapped).
    const roots = [
      "references",
      ".claude",
      ".agentteams",
      ".agentteams-status",
      "agentteams.jsonc",
    ].map((n) => join(sb.project, n));
    // The HALT's index, which the session must not read.
    assert.ok(Deno.statSync(join(sb.project, ".agentteams", "csv-index-decisions.json")).isFile);
    const before = await snapshotTree(...roots);
    const r = await inSandbox(
      sb,
      `
ln references/security-decisions.log.csv src/d.csv 2>&1; echo "ln-log=$?"
ln agentteams.jsonc src/b.json 2>&1; echo "ln-brief=$?"
head -1 references/security-decisions.log.csv > references/security-decisions.log.csv 2>&1; echo "cut-log=$?"
echo '{}' > agentteams.jsonc 2>&1; echo "write-brief=$?"
cat .agentteams/csv-index-decisions.json >/dev/null 2>&1; echo "read-index=$?"
echo planted > .agentteams/planted 2>&1; echo "plant-ledger-dir=$?"
echo planted > .agentteams-status/runner-x25519.pub.pem 2>&1; echo "plant-status=$?"
for d in references .claude .agentteams .agentteams-status agentteams.jsonc; do
  mv "$d" moved 2>&1; echo "mv$d=$?"
done
`,
    );
    const o = outcomes(r);
    assert.equal(o.get("ln-log"), "1", r.stdout);
    assert.equal(o.get("ln-brief"), "1", r.stdout);
    assert.match(r.stdout, /src\/d\.csv.*Invalid cross-device link/);
    assert.match(r.stdout, /src\/b\.json.*Invalid cross-device link/);
    assert.equal(o.get("cut-log"), "1", r.stdout);
    assert.equal(o.get("write-brief"), "1", r.stdout);
    assert.match(r.stderr, /security-decisions\.log\.csv: Read-only file system/);
    assert.match(r.stderr, /agentteams\.jsonc: Read-only file system/);
    // `.agentteams/` is read-denied: an empty tmpfs inside, whose writes stay there.
    assert.equal(o.get("read-index"), "1", r.stdout);
    assert.equal(o.get("plant-status"), "1", r.stdout);
    for (const d of ["references", ".claude", ".agentteams", ".agentteams-status"]) {
      assert.equal(o.get(`mv${d}`), "1", `${d} was renamed:\n${r.stdout}`);
      assert.match(r.stdout, new RegExp(`'${d.replace(".", "\\.")}'.*Device or resource busy`));
    }
    assert.equal(o.get("mvagentteams.jsonc"), "1", r.stdout);
    assertSameTree(
      before,
      await snapshotTree(...roots),
      "the trust roots after the session's tricks",
    );
    for (const n of ["src/d.csv", "src/b.json", "moved"]) {
      await assert.rejects(Deno.lstat(join(sb.project, n)), Deno.errors.NotFound, n);
    }
    // The operator's stop still holds.
    const g = await runCli(["gate", "delete:src/a.txt", ...P], { env });
    assert.equal(g.code, 1, g.stdout + g.stderr);
    assert.match(g.stderr, /refused: HALTED/);
  } finally {
    await sb.dispose();
  }
});

Deno.test("Claude's sandbox: a write-denied trust-root folder that does not exist yet cannot be made by the session", async () => {
  const { sb } = await haltedProject("srt-c");
  try {
    // `.agentteams-status/` does not exist until `serve`; `.agentteams-queue/` neither.
    const status = join(sb.project, ".agentteams-status");
    const queue = join(sb.project, ".agentteams-queue");
    await assert.rejects(Deno.lstat(status), Deno.errors.NotFound);
    const r = await inSandbox(
      sb,
      `
mkdir .agentteams-status 2>&1; echo "mkdir-status=$?"
ln -s src .agentteams-status 2>&1; echo "link-status=$?"
echo planted > .agentteams-status/runner-x25519.pub.pem 2>&1; echo "plant-status=$?"
rm -f .agentteams-status 2>&1; echo "rm-status=$?"
mkdir .agentteams-queue 2>&1; echo "mkdir-queue=$?"
setsid sh -c 'sleep 2; mkdir .agentteams-status && touch src/outlived' >/dev/null 2>&1 &
echo done=0
`,
    );
    const o = outcomes(r);
    assert.equal(o.get("done"), "0", r.stdout + r.stderr);
    for (const k of ["mkdir-status", "link-status", "plant-status", "rm-status"]) {
      assert.equal(o.get(k), "1", `${k} succeeded:\n${r.stdout}`);
    }
    // A read deny of an absent path hides nothing, and no write deny names the queue.
    assert.equal(o.get("mkdir-queue"), "0", r.stdout);
    assert.ok((await Deno.lstat(queue)).isDirectory);
    // The placeholder was removed after the command, and nothing of the session's is there.
    await assert.rejects(Deno.lstat(status), Deno.errors.NotFound, "placeholder left behind");
    // The background process died with the sandbox's PID namespace.
    await new Promise((ok) => setTimeout(ok, 3000));
    await assert.rejects(Deno.lstat(status), Deno.errors.NotFound, "made by an outliving process");
    await assert.rejects(Deno.lstat(join(sb.project, "src", "outlived")), Deno.errors.NotFound);
  } finally {
    await sb.dispose();
  }
});

Deno.test("Claude's sandbox: with the rules init writes, what a sandboxed command writes into .agentteams-queue/ reaches the host; under an earlier init's Read(./.agentteams-queue/**) the folder is a private tmpfs and nothing arrives", async () => {
  const { sb } = await haltedProject("srt-queue");
  try {
    const queue = join(sb.project, ".agentteams-queue");
    await Deno.mkdir(join(queue, "requests"), { recursive: true });
    const settingsPath = join(sb.project, ".claude", "settings.json");
    const settings = JSON.parse(Deno.readTextFileSync(settingsPath));
    const deny: string[] = settings.permissions.deny;
    assert.ok(!deny.some((r) => r.includes(".agentteams-queue")), deny.join());
    const write = (name: string) =>
      inSandbox(sb, `echo x > .agentteams-queue/requests/${name} 2>&1; echo "write=$?"`);
    const r = await write("a.json");
    assert.equal(outcomes(r).get("write"), "0", r.stdout + r.stderr);
    assert.deepEqual([...Deno.readDirSync(join(queue, "requests"))].map((e) => e.name), [
      "a.json",
    ]);
    Deno.removeSync(join(queue, "requests", "a.json"));
    // The rule an earlier init wrote: the write succeeds inside and never reaches the host.
    settings.permissions.deny = [...deny, "Read(./.agentteams-queue/**)"];
    Deno.writeTextFileSync(settingsPath, JSON.stringify(settings, null, 2) + "\n");
    // Inside, the folder is an empty tmpfs of its own (no requests/ there): the write fails or
    // lands in it, and either way nothing reaches the host.
    const hidden = await write("b.json");
    assert.match(hidden.stdout + hidden.stderr, /requests\/b\.json: No such file or directory/);
    assert.deepEqual([...Deno.readDirSync(join(queue, "requests"))].map((e) => e.name), []);
  } finally {
    await sb.dispose();
  }
});

Deno.test("Claude's sandbox: the folders above a deeper trust root are pinned, so none is moved aside", async () => {
  // A brief kept deeper in the project (`--brief config/deep/b.json`), with its own rule.
  const sb = await sandbox("srt-nested");
  try {
    await Deno.mkdir(join(sb.project, "config", "deep"), { recursive: true });
    await Deno.mkdir(join(sb.project, ".claude"));
    const brief = join(sb.project, "config", "deep", "b.json");
    await Deno.writeTextFile(brief, "{}\n");
    await Deno.writeTextFile(
      join(sb.project, ".claude", "settings.json"),
      JSON.stringify({
        permissions: { deny: ["Edit(./config/deep/b.json)", "Edit(./.claude/**)"] },
      }),
    );
    const before = await snapshotTree(join(sb.project, "config"));
    const r = await inSandbox(
      sb,
      `
mv config moved 2>&1; echo "mv-top=$?"
mv config/deep config/moved 2>&1; echo "mv-deep=$?"
ln config/deep/b.json linked 2>&1; echo "ln=$?"
`,
    );
    const o = outcomes(r);
    assert.equal(o.get("mv-top"), "1", r.stdout);
    assert.match(r.stdout, /'config' to 'moved': Device or resource busy/);
    assert.equal(o.get("mv-deep"), "1", r.stdout);
    assert.match(r.stdout, /'config\/deep' to 'config\/moved': Read-only file system/);
    assert.equal(o.get("ln"), "1", r.stdout);
    assert.match(r.stdout, /Invalid cross-device link/);
    assertSameTree(before, await snapshotTree(join(sb.project, "config")), "config/");
  } finally {
    await sb.dispose();
  }
});
