/**
 * Issue 13, hole 1: a replaced file never keeps the setuid, setgid or sticky bit. A local user's
 * own setuid file inside a write scope, rewritten (by an operator running as root) with content
 * that is an ELF header in valid UTF-8, must not become a setuid-root program: the new file keeps
 * the old permission bits (0755 stays 0755) but 04755, 02755, 06755 and 01755 all become 0755,
 * 02775 becomes 0775, 01644 becomes 0644. Checked through the library (`applyProposal`
 * in-process, a real write) and the CLI (`agentteams apply` as a subprocess), with the bytes the
 * proposal carried. The new file is the operator's (its uid and gid); another hard link to the old
 * file keeps the old inode (its bytes, mode and owner): apply replaces the name, never the inode.
 * A deletion removes only the name, and changes no mode.
 *
 * When run as root, each setuid file is first given to an unprivileged owner
 * (`AGENTTEAMS_TEST_USER`, which `scripts/test` creates; else `nobody`), as in the attack.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import { parsePolicy } from "../../lib/policy/parse.ts";
import { applyIn as applyProposal } from "../_helpers/acts.ts";
import type { GateRunner } from "../../lib/proposals/gates.ts";
import { sandbox } from "../_helpers/mod.ts";
import {
  apply,
  assertApplied,
  change,
  deletion,
  dispatch,
  ledgerRows,
  makeProject,
  putFile,
  sha256,
  withProject,
} from "./_helpers.ts";

const enc = new TextEncoder();

/**
 * The start of an x86-64 ELF executable, every byte below 0x80 (so valid UTF-8): magic, class,
 * data, version, padding, `e_type` ET_EXEC, `e_machine` x86-64, then a tail of text.
 */
const ELF = "\u007fELF\u0002\u0001\u0001\u0000" + "\u0000".repeat(8) +
  "\u0002\u0000\u003e\u0000\u0001\u0000\u0000\u0000" + "\u0040\u0010\u0040".repeat(4) +
  "\nsetuid-root if the mode were kept\n";

/** Old mode → the mode the replaced file must have (exact `& 0o7777`). */
const CASES: readonly (readonly [number, number])[] = [
  [0o4755, 0o755],
  [0o2755, 0o755],
  [0o6755, 0o755],
  [0o1755, 0o755],
  [0o2775, 0o775],
  [0o1644, 0o644],
  [0o4750, 0o750],
  [0o755, 0o755],
];

const oct = (m: number) => m.toString(8).padStart(4, "0");
const modeOf = (st: Deno.FileInfo) => (st.mode ?? 0) & 0o7777;

/** The unprivileged owner to give the setuid files when root (`null` when not root). */
async function victimIds(): Promise<{ uid: number; gid: number } | null> {
  if (Deno.uid() !== 0) return null;
  const user = Deno.env.get("AGENTTEAMS_TEST_USER");
  if (user === undefined || user === "") return { uid: 65534, gid: 65534 };
  const id = async (flag: string) => {
    const out = await new Deno.Command("/usr/bin/id", { args: [flag, user] }).output();
    assert.ok(out.success, `id ${flag} ${user}: ${new TextDecoder().decode(out.stderr)}`);
    return Number(new TextDecoder().decode(out.stdout).trim());
  };
  return { uid: await id("-u"), gid: await id("-g") };
}

/** Gives `path` to the victim (when root), then `mode` (chown clears setuid, so chmod last). */
async function plant(path: string, mode: number): Promise<void> {
  const ids = await victimIds();
  if (ids !== null) await Deno.chown(path, ids.uid, ids.gid);
  await Deno.chmod(path, mode);
  assert.equal(modeOf(await Deno.lstat(path)), mode, `could not plant mode ${oct(mode)}`);
}

/** The replaced file: the proposal's bytes, the expected mode, the operator's. */
async function assertReplaced(path: string, want: number, was: number): Promise<void> {
  assert.deepEqual(await Deno.readFile(path), enc.encode(ELF), `${path}: not the proposal's bytes`);
  const st = await Deno.lstat(path);
  assert.ok(st.isFile);
  assert.equal(
    oct(modeOf(st)),
    oct(want),
    `${path} was ${oct(was)}: the replaced file must be ${oct(want)} (no setuid/setgid/sticky)`,
  );
  assert.equal(st.uid, Deno.uid(), "the replaced file is the operator's");
  assert.equal(st.gid, Deno.gid(), "the replaced file is the operator's group's");
}

const noGates: GateRunner = () => Promise.reject(new Error("no gate runs in these tests"));

Deno.test("applyProposal (library, a real write): setuid/setgid/sticky files replaced by ELF-like text lose those bits, keep the rest", async () => {
  const sb = await sandbox("prop-mode-lib");
  try {
    const brief = JSON.stringify({ agent_policies: { worker: { write_scopes: ["src/"] } } });
    const policy = parsePolicy(brief, {
      briefPath: join(sb.project, "agentteams.jsonc"),
      projectRoot: sb.project,
      briefSha256: sha256(brief),
    });
    const hmac = new HmacKey(crypto.getRandomValues(new Uint8Array(32)));
    const outside = join(sb.dir, "outside");
    await Deno.mkdir(outside);
    for (const [was, want] of CASES) {
      const rel = `src/prog-${oct(was)}`;
      const path = join(sb.project, rel);
      const old = `#!/bin/sh\necho ${oct(was)}\n`;
      await putFile(path, old);
      await plant(path, was);
      // Another name for the same inode, outside the project.
      const link = join(outside, `prog-${oct(was)}`);
      await Deno.link(path, link);
      const oldSt = await Deno.lstat(path);
      const { nonce } = await issueDispatch(sb.project, hmac, "worker");
      const r = await applyProposal({
        kind: "change-proposal",
        dispatch: nonce,
        path: rel,
        base_sha256: sha256(old),
        content: ELF,
        rationale: "replace a setuid file",
      }, { root: sb.project, policy, hmac, gateRunner: noGates });
      assert.equal(r.written, true);
      assert.equal(r.new_sha256, sha256(ELF));
      await assertReplaced(path, want, was);
      // The other name still holds the old inode, untouched: apply replaced the name only.
      const linkSt = await Deno.lstat(link);
      assert.equal(linkSt.ino, oldSt.ino);
      assert.notEqual((await Deno.lstat(path)).ino, oldSt.ino);
      assert.equal(await Deno.readTextFile(link), old);
      assert.equal(oct(modeOf(linkSt)), oct(was));
      assert.equal(linkSt.uid, oldSt.uid);
      assert.equal(linkSt.nlink, 1);
    }
  } finally {
    await sb.dispose();
  }
});

Deno.test("agentteams apply (CLI): a setuid/setgid/sticky file replaced by ELF-like text loses those bits; a deletion removes the name only", async () => {
  const files: Record<string, string> = {};
  for (const [was] of CASES) files[`bin/prog-${oct(was)}`] = `#!/bin/sh\necho ${oct(was)}\n`;
  files["bin/gone"] = "#!/bin/sh\necho gone\n";
  await withProject(
    makeProject("mode-cli", {
      brief: JSON.stringify({ agent_policies: { worker: { write_scopes: ["bin/"] } } }),
      files,
    }),
    async (p) => {
      for (const [was, want] of CASES) {
        const rel = `bin/prog-${oct(was)}`;
        const path = join(p.root, rel);
        await plant(path, was);
        const nonce = await dispatch(p, "worker");
        const out = assertApplied(await apply(p, change(nonce, rel, ELF, sha256(files[rel]))));
        assert.equal(out.written, true);
        assert.equal(out.new_sha256, sha256(ELF));
        await assertReplaced(path, want, was);
      }
      // A deletion of a setuid file: the name goes; a hard link elsewhere keeps the inode as it
      // was (a deletion changes no mode and no other name).
      const gone = join(p.root, "bin/gone");
      await plant(gone, 0o4755);
      const link = join(p.outside, "gone-link");
      await Deno.link(gone, link);
      const nonce = await dispatch(p, "worker");
      assertApplied(await apply(p, deletion(nonce, "bin/gone", sha256(files["bin/gone"]))));
      await assert.rejects(Deno.lstat(gone), Deno.errors.NotFound);
      const linkSt = await Deno.lstat(link);
      assert.equal(oct(modeOf(linkSt)), oct(0o4755));
      assert.equal(await Deno.readTextFile(link), files["bin/gone"]);
      const acts = (await ledgerRows(p.root)).filter((r) =>
        r.action === "apply-proposal" || r.action === "delete-proposal"
      );
      assert.equal(acts.length, CASES.length + 1);
    },
  );
});
