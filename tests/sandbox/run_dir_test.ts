/**
 * The private TMPDIR's cleanup: a directory the command left unenterable (mode 0500) is opened up
 * and removed, and a cleanup that still fails is reported by the result, never thrown over the
 * run's outcome. Root bypasses permission checks, so the subject runs as root without the
 * capabilities that bypass them (`setpriv` drops them from the bounding set), as an unprivileged
 * operator would.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO, removeTree, tempDir } from "../_helpers/mod.ts";

const RUN_DIR = fileURLToPath(new URL("../../lib/sandbox/run_dir.ts", import.meta.url));
const SETPRIV = "/usr/bin/setpriv";

/** Runs removePrivateTmpdir(dir) in a process that cannot bypass file permissions. */
async function removeWithoutBypass(dir: string, script: string): Promise<string> {
  await Deno.writeTextFile(
    script,
    `import { removePrivateTmpdir } from ${JSON.stringify(`file://${RUN_DIR}`)};\n` +
      "console.log(JSON.stringify(removePrivateTmpdir(Deno.args[0])));\n",
  );
  const out = await new Deno.Command(SETPRIV, {
    args: [
      "--bounding-set",
      "-dac_override,-dac_read_search,-fowner",
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
  await Deno.stat(SETPRIV); // fails loudly when setpriv is missing
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
