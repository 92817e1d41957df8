/**
 * scripts/install.sh (issue 27 item 2), run under dash against a local release directory: it
 * installs a verified binary, with minisign and (without minisign on PATH) with OpenSSL; and it
 * refuses every tampered input of the issue, with neither verifier, leaving the prefix untouched.
 * The release's binaries are stand-ins (shell scripts): `deno compile` cannot run here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generatePem } from "../../lib/crypto/ed25519.ts";
import { minisignPublicKeyText } from "../../lib/release/minisign.ts";
import { signRelease, writeSums } from "../../lib/release/release_dir.ts";
import { REPO_ROOT, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";

const INSTALL = join(REPO_ROOT, "scripts/install.sh");
const TARGET = "x86_64-unknown-linux-gnu";
const OTHER = "aarch64-apple-darwin";
const dec = new TextDecoder();

/** The programs install.sh uses, besides the verifiers. */
const TOOLS = [
  "sh",
  "dash",
  "uname",
  "mktemp",
  "chmod",
  "cp",
  "rm",
  "mv",
  "mkdir",
  "sed",
  "tr",
  "od",
  "dd",
  "wc",
  "cut",
  "awk",
  "grep",
  "cat",
  "sha256sum",
];

function which(name: string): string {
  for (const d of ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"]) {
    try {
      if (Deno.statSync(`${d}/${name}`).isFile) return `${d}/${name}`;
    } catch { /* next */ }
  }
  throw new Error(
    `${name} is not installed (install.sh's tests need it; scripts/test installs it)`,
  );
}

/** A PATH directory holding links to TOOLS plus `verifiers`. */
function pathWith(dir: string, verifiers: string[]): string {
  Deno.mkdirSync(dir);
  for (const t of [...TOOLS, ...verifiers]) Deno.symlinkSync(which(t), join(dir, t));
  return dir;
}

interface World {
  dir: string;
  release: string;
  pub: string;
  /** The release's signing key. */
  keyPem: string;
  otherKeyPem: string;
  paths: { minisign: string; openssl: string; neither: string };
}

async function world(): Promise<World> {
  const dir = await tempDir("install-sh");
  const release = join(dir, "release");
  Deno.mkdirSync(release);
  for (const t of [TARGET, OTHER]) {
    Deno.writeTextFileSync(join(release, `agentteams-${t}`), `#!/bin/sh\necho "agentteams ${t}"\n`);
  }
  Deno.writeTextFileSync(join(release, "agentteams-bundle.tar.gz"), "bundle");
  writeSums(release);
  const { privatePem } = await generatePem();
  await signRelease(release, privatePem, new Date());
  const pub = join(dir, "release.pub");
  Deno.writeTextFileSync(pub, await minisignPublicKeyText(privatePem));
  return {
    dir,
    release,
    pub,
    keyPem: privatePem,
    otherKeyPem: (await generatePem()).privatePem,
    paths: {
      minisign: pathWith(join(dir, "path-minisign"), ["minisign"]),
      openssl: pathWith(join(dir, "path-openssl"), ["openssl"]),
      neither: pathWith(join(dir, "path-neither"), []),
    },
  };
}

async function install(
  w: World,
  from: string,
  prefix: string,
  path: string,
): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(which("dash"), {
    args: [INSTALL, "--from", from, "--pubkey", w.pub, "--prefix", prefix, "--target", TARGET],
    clearEnv: true,
    env: { PATH: path, HOME: w.dir, TMPDIR: w.dir },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test("install.sh is POSIX sh: sh -n and dash -n accept it", async () => {
  for (const sh of ["sh", "dash"]) {
    const r = await new Deno.Command(which(sh), { args: ["-n", INSTALL], stderr: "piped" })
      .output();
    assert.equal(r.code, 0, dec.decode(r.stderr));
  }
});

Deno.test("install.sh installs the verified binary for the target, with minisign and with OpenSSL", async () => {
  const w = await world();
  try {
    for (const v of ["minisign", "openssl"] as const) {
      const prefix = join(w.dir, `prefix-${v}`);
      const r = await install(w, w.release, prefix, w.paths[v]);
      assert.equal(r.code, 0, r.out);
      assert.match(
        r.out,
        new RegExp(`installed .*agentteams \\(agentteams-${TARGET}; signature checked with ${v}`),
      );
      const ran = await new Deno.Command(join(prefix, "bin", "agentteams"), { stdout: "piped" })
        .output();
      assert.equal(dec.decode(ran.stdout), `agentteams ${TARGET}\n`);
      assert.equal(Deno.statSync(join(prefix, "bin", "agentteams")).mode! & 0o777, 0o755);
      // Only the binary landed: no temporary file beside it.
      assert.deepEqual([...Deno.readDirSync(join(prefix, "bin"))].map((e) => e.name), [
        "agentteams",
      ]);
    }
  } finally {
    await Deno.remove(w.dir, { recursive: true });
  }
});

Deno.test("install.sh refuses every tampered release, with either verifier, and installs nothing", async () => {
  const w = await world();
  try {
    const cases: [string, RegExp, (rel: string) => Promise<void>][] = [
      ["a tampered binary", /has SHA-256 .* not the .* signed SHA256SUMS lists/, async (rel) => {
        await Deno.writeTextFile(join(rel, `agentteams-${TARGET}`), "#!/bin/sh\necho evil\n");
      }],
      ["a truncated download", /has SHA-256 .* not the/, async (rel) => {
        await Deno.truncate(join(rel, `agentteams-${TARGET}`), 5);
      }],
      ["a tampered SHA256SUMS", /does not verify/, async (rel) => {
        // The evil binary and a list naming its hash: only the signature stands in the way.
        const bin = join(rel, `agentteams-${TARGET}`);
        await Deno.writeTextFile(bin, "#!/bin/sh\necho evil\n");
        const sums = (await Deno.readTextFile(join(rel, "SHA256SUMS"))).split("\n");
        const evil = new Uint8Array(
          await crypto.subtle.digest("SHA-256", await Deno.readFile(bin)),
        ).toHex();
        await Deno.writeTextFile(
          join(rel, "SHA256SUMS"),
          sums.map((l) => l.endsWith(`agentteams-${TARGET}`) ? `${evil}  agentteams-${TARGET}` : l)
            .join("\n"),
        );
      }],
      ["a signature by another key", /another key/, async (rel) => {
        await signRelease(rel, w.otherKeyPem, new Date());
      }],
      ["an edited trusted comment", /does not verify/, async (rel) => {
        const p = join(rel, "SHA256SUMS.minisig");
        const t = await Deno.readTextFile(p);
        await Deno.writeTextFile(p, t.replace(/^trusted comment: .*$/m, "trusted comment: x"));
      }],
      [
        "a release missing the target",
        /has no agentteams-x86_64-unknown-linux-gnu/,
        async (rel) => {
          await Deno.remove(join(rel, `agentteams-${TARGET}`));
        },
      ],
      ["a list that does not name the target", /SHA256SUMS does not list it/, async (rel) => {
        const t = await Deno.readTextFile(join(rel, "SHA256SUMS"));
        await Deno.writeTextFile(
          join(rel, "SHA256SUMS"),
          t.split("\n").filter((l) => !l.endsWith(TARGET)).join("\n"),
        );
        // Signed by the release's key: a genuine release that has no binary for the target.
        await signRelease(rel, w.keyPem, new Date());
      }],
      ["no signature", /has no SHA256SUMS.minisig/, async (rel) => {
        await Deno.remove(join(rel, "SHA256SUMS.minisig"));
      }],
    ];
    for (const v of ["minisign", "openssl"] as const) {
      for (const [what, why, tamper] of cases) {
        const rel = join(w.dir, `rel-${v}-${cases.findIndex((c) => c[0] === what)}`);
        await copyDir(w.release, rel);
        await tamper(rel);
        const prefix = join(w.dir, `prefix-${v}`);
        Deno.mkdirSync(join(prefix, "bin"), { recursive: true });
        Deno.writeTextFileSync(join(prefix, "bin", "agentteams"), "the version already there\n");
        const before = await snapshotTree(prefix);
        const r = await install(w, rel, prefix, w.paths[v]);
        assert.equal(r.code, 1, `${v}, ${what}: ${r.out}`);
        assert.match(r.out, /^install\.sh: refused: .*; nothing was installed$/m, `${v}, ${what}`);
        assert.match(r.out, why, `${v}, ${what}: ${r.out}`);
        assertSameTree(before, await snapshotTree(prefix), `${v}, ${what}`);
      }
    }
    // Neither verifier: refused, never installed unverified.
    const prefix = join(w.dir, "prefix-neither");
    const r = await install(w, w.release, prefix, w.paths.neither);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /neither minisign nor an OpenSSL .* install minisign/);
    assert.throws(() => Deno.statSync(prefix), Deno.errors.NotFound);
  } finally {
    await Deno.remove(w.dir, { recursive: true });
  }
});

async function copyDir(src: string, dst: string): Promise<void> {
  await Deno.mkdir(dst);
  for await (const e of Deno.readDir(src)) {
    await Deno.copyFile(join(src, e.name), join(dst, e.name));
  }
}
