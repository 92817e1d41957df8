/**
 * `deno task compile`: release artifacts in dist/.
 *
 * 1. `dist/agentteams/`: the code-split bundle (scripts/bundle.ts), run with the release flags
 *    (the line this prints); a command reads and loads only its own chunks.
 * 2. `dist/agentteams-<target>`: self-contained binaries (`deno compile`; the host's target when
 *    none is named, never `dist/agentteams`, which is the bundle's folder) with the union of the
 *    commands' permissions baked in: read and write (paths are the project's, known only at run
 *    time, so they are narrowed at start by revoking what a command does not need), run limited
 *    to bwrap, sandbox-exec and git, the environment variables the commands read, `sys` uid;
 *    never net, never ffi. `deno compile` needs the `denort` runtime: it downloads it from
 *    dl.deno.land, or takes `DENORT_BIN`. A target that does not build is reported with
 *    `deno compile`'s own message, and the task exits 1 (the bundle and its sums are still written).
 * 3. `dist/SHA256SUMS`, and `dist/SHA256SUMS.sig` (Ed25519, hex) when `AGENTTEAMS_RELEASE_KEY`
 *    names a PKCS#8 PEM private key; verify with the matching public key.
 *
 * Usage: deno task compile [--target x86_64-unknown-linux-gnu ...] [--out DIR (default dist)]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { releaseFlags } from "../lib/permissions.ts";
import { importPrivatePem, signHex } from "../lib/crypto/ed25519.ts";
import { bundleRunLine, bundleTo } from "./bundle.ts";
import { resolve } from "../lib/fs/path.ts";

const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const deno = Deno.execPath();

const targets: string[] = [];
let out = `${root}/dist`;
for (let i = 0; i < Deno.args.length; i++) {
  const a = Deno.args[i];
  const v = Deno.args[i + 1];
  if ((a === "--target" || a === "--out") && v !== undefined && !v.startsWith("--")) {
    if (a === "--target") targets.push(v);
    else out = v;
    i++;
  } else {
    console.error(`usage: deno task compile [--target TRIPLE ...] [--out DIR]; not ${a}`);
    Deno.exit(2);
  }
}
const dist = resolve(out);
Deno.mkdirSync(dist, { recursive: true });
if (targets.length === 0) targets.push(Deno.build.target);

async function sh(args: string[]): Promise<{ ok: boolean; err: string }> {
  const out = await new Deno.Command(deno, { args, cwd: root, stdout: "inherit", stderr: "piped" })
    .output();
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) console.error(err);
  return { ok: out.success, err };
}

const built: string[] = [];
// Code-split: each command's modules are a chunk loaded on first use, so `run` never parses the
// schema export's zod, and the whole run path is a handful of files instead of ~130 modules.
try {
  for (const name of await bundleTo(root, `${dist}/agentteams`)) built.push(`agentteams/${name}`);
} catch (e) {
  console.error(String(e));
  Deno.exit(1);
}
console.log(
  `built ${dist}/agentteams/; run it with (scripts/install writes a launcher that does):\n  ` +
    `${bundleRunLine(deno, `${dist}/agentteams`)} --help`,
);

// The union of the commands' permissions (lib/permissions.ts), the same as the installed launcher's.
const perms = releaseFlags();
const failed: string[] = [];
for (const target of targets) {
  const name = `agentteams-${target}`;
  const r = await sh([
    "compile",
    "--quiet",
    ...perms,
    "--target",
    target,
    "--output",
    `${dist}/${name}`,
    "main.ts",
  ]);
  if (r.ok) {
    built.push(name);
    console.log(`built ${dist}/${name}; run it with:\n  ${dist}/${name} --help`);
  } else {
    failed.push(name);
    // deno compile's own message was printed above; add the one cause it does not name.
    const runtime = /dl\.deno\.land|denort|download/i.test(r.err)
      ? " (it needs the denort runtime: network access to dl.deno.land, or DENORT_BIN naming a " +
        "denort binary of the same Deno version)"
      : "";
    console.error(`compile ${name}: not built${runtime}`);
  }
}

const sums = built.map((f) => {
  const h = createHash("sha256").update(Deno.readFileSync(`${dist}/${f}`)).digest("hex");
  return `${h}  ${f}`;
}).join("\n") + "\n";
Deno.writeTextFileSync(`${dist}/SHA256SUMS`, sums);
console.log(`wrote ${dist}/SHA256SUMS`);
let keyPath: string | undefined;
try {
  keyPath = Deno.env.get("AGENTTEAMS_RELEASE_KEY");
} catch {
  keyPath = undefined;
}
if (keyPath) {
  const key = await importPrivatePem(Deno.readTextFileSync(keyPath));
  Deno.writeTextFileSync(`${dist}/SHA256SUMS.sig`, (await signHex(key, sums)) + "\n");
  console.log(`wrote ${dist}/SHA256SUMS.sig`);
}
if (failed.length > 0) {
  console.error(`deno task compile: ${failed.join(", ")} not built; see the messages above`);
  Deno.exit(1);
}
