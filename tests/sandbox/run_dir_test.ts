/**
 * The private TMPDIR's cleanup: a directory the command left unenterable (mode 0500) is opened up
 * and removed, and a cleanup that still fails is reported by the result, never thrown over the
 * run's outcome. Root bypasses permission checks, so the subject runs as root without the
 * capabilities that bypass them (`setpriv` drops them from the bounding set), as an unprivileged
 * operator would.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO, removeTree, tempDir, withoutBypass } from "../_helpers/mod.ts";
import { makePrivateTmpdir, runTmpParent } from "../../lib/sandbox/run_dir.ts";
import { SandboxError } from "../../lib/errors.ts";

const RUN_DIR = fileURLToPath(new URL("../../lib/sandbox/run_dir.ts", import.meta.url));

/** Runs removePrivateTmpdir(dir) in a process that cannot bypass file permissions. */
async function removeWithoutBypass(dir: string, script: string): Promise<string> {
  await Deno.writeTextFile(
    script,
    `import { removePrivateTmpdir } from ${JSON.stringify(`file://${RUN_DIR}`)};\n` +
      "console.log(JSON.stringify(removePrivateTmpdir(Deno.args[0])));\n",
  );
  const [setpriv, ...noBypass] = withoutBypass();
  const out = await new Deno.Command(setpriv, {
    args: [
      ...noBypass,
      DENO,
      "run",
      "--no-check",
      "--allow-read",
      "--allow-write",
      script,
      dir,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return text;
}

Deno.test("removePrivateTmpdir: a directory the command left at mode 0500 (a file inside) is opened up and removed", async () => {
  withoutBypass(); // fails loudly when setpriv is missing
  const dir = await tempDir("run-dir");
  try {
    const tmp = join(dir, "agentteams-run-x");
    await Deno.mkdir(join(tmp, "stuck/deeper"), { recursive: true });
    await Deno.writeTextFile(join(tmp, "stuck/deeper/f"), "x");
    await Deno.writeTextFile(join(tmp, "stuck/f"), "x");
    // A link out of it must not be followed when modes are put back.
    const outside = join(dir, "outside");
    await Deno.mkdir(outside, { mode: 0o500 });
    await Deno.chmod(outside, 0o500);
    await Deno.symlink(outside, join(tmp, "stuck/link"));
    await Deno.chmod(join(tmp, "stuck/deeper"), 0o500);
    await Deno.chmod(join(tmp, "stuck"), 0o500);
    assert.equal(await removeWithoutBypass(tmp, join(dir, "subject.ts")), "true");
    await assert.rejects(() => Deno.lstat(tmp), Deno.errors.NotFound);
    assert.equal((await Deno.stat(outside)).mode! & 0o777, 0o500);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("runTmpParent: an absolute TMPDIR is the operator's; unset or relative, a per-user directory, never all of /tmp", () => {
  assert.equal(runTmpParent({ TMPDIR: "/var/tmp/op" }, 1000), "/var/tmp/op");
  assert.equal(runTmpParent({}, 1000), "/tmp/agentteams-1000");
  assert.equal(runTmpParent({ TMPDIR: "" }, 0), "/tmp/agentteams-0");
  assert.equal(runTmpParent({ TMPDIR: "tmp" }, 7), "/tmp/agentteams-7");
});

Deno.test("makePrivateTmpdir with TMPDIR unset: the per-user parent is made 0700 and the run's directory lies in it", () => {
  const uid = Deno.uid();
  const dir = makePrivateTmpdir({}, uid);
  try {
    assert.equal(dirname(dir), `/tmp/agentteams-${uid}`);
    const parent = Deno.lstatSync(`/tmp/agentteams-${uid}`);
    assert.ok(parent.isDirectory);
    assert.equal((parent.mode ?? 0) & 0o777, 0o700);
    assert.equal(parent.uid, uid);
    assert.equal((Deno.statSync(dir).mode ?? 0) & 0o777, 0o700);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/** A uid no one here has, so the per-user parent's path is this test's alone. */
const OTHER_UID = 4_242_424;

/** Asserts the per-user parent at `path` is refused with CONFINED_PATH_UNSAFE and gains no entry. */
function expectRefusedUntouched(path: string, problem: RegExp): void {
  const before = [...Deno.readDirSync(path)].map((e) => e.name);
  assert.throws(
    () => makePrivateTmpdir({}, OTHER_UID),
    (e: unknown) =>
      e instanceof SandboxError && e.code === "CONFINED_PATH_UNSAFE" && problem.test(e.message),
  );
  assert.deepEqual([...Deno.readDirSync(path)].map((e) => e.name), before, "nothing made in it");
}

Deno.test("makePrivateTmpdir refuses a planted per-user parent (a symlink, another owner, open modes): CONFINED_PATH_UNSAFE, nothing made", async () => {
  const path = `/tmp/agentteams-${OTHER_UID}`;
  const dir = await tempDir("run-dir-planted");
  await removeTree(path);
  try {
    // A symlink to a directory someone else reads.
    Deno.symlinkSync(dir, path);
    expectRefusedUntouched(path, /agentteams-4242424 is a symlink; remove it, or set TMPDIR/);
    Deno.removeSync(path);
    // A real directory owned by someone else (here: root, for uid 4242424).
    Deno.mkdirSync(path, { mode: 0o700 });
    expectRefusedUntouched(path, /is owned by uid \d+, not 4242424/);
    // Its own, but open to others.
    Deno.chownSync(path, OTHER_UID, OTHER_UID);
    Deno.chmodSync(path, 0o755);
    expectRefusedUntouched(path, /has mode 0755; it must be 0700/);
  } finally {
    await removeTree(path);
    await removeTree(dir);
  }
});
