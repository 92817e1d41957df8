/**
 * `deno task compile`: release artifacts in dist/.
 *
 * 1. `dist/agentteams/`: the code-split bundle (scripts/bundle.ts), runnable with
 *    `deno run dist/agentteams/main.js`; a command reads and loads only its own chunks.
 * 2. `dist/agentteams-<target>`: self-contained binaries (`deno compile`) with the union of the
 *    commands' permissions baked in: read and write (paths are the project's, known only at run
 *    time, so they are narrowed at start by revoking what a command does not need), run limited
 *    to bwrap, sandbox-exec and git, the environment variables the commands read, `sys` uid;
 *    never net, never ffi. `deno compile` needs the `denort` runtime: it downloads it from
 *    dl.deno.land, or takes `DENORT_BIN`. Where neither works, this step says so and is skipped.
 * 3. `dist/SHA256SUMS`, and `dist/SHA256SUMS.sig` (Ed25519, hex) when `AGENTTEAMS_RELEASE_KEY`
 *    names a PKCS#8 PEM private key; verify with the matching public key.
 *
 * Usage: deno task compile [--target x86_64-unknown-linux-gnu ...]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { releaseFlags } from "../lib/permissions.ts";
import { importPrivatePem, signHex } from "../lib/crypto/ed25519.ts";
import { bundleTo } from "./bundle.ts";

const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const dist = `${root}/dist`;
const deno = Deno.execPath();
Deno.mkdirSync(dist, { recursive: true });

const targets: string[] = [];
for (let i = 0; i < Deno.args.length; i++) {
  if (Deno.args[i] === "--target") targets.push(Deno.args[++i]);
}
if (targets.length === 0) targets.push("");

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
  "built dist/agentteams/ (run with: deno run --no-config " + releaseFlags().join(" ") +
    " dist/agentteams/main.js; scripts/install writes a launcher that does)",
);

// The union of the commands' permissions (lib/permissions.ts), the same as the installed launcher's.
const perms = releaseFlags();
for (const target of targets) {
  const name = target === "" ? "agentteams" : `agentteams-${target}`;
  const r = await sh([
    "compile",
    "--quiet",
    ...perms,
    ...(target === "" ? [] : ["--target", target]),
    "--output",
    `${dist}/${name}`,
    "main.ts",
  ]);
  if (r.ok) {
    built.push(name);
    console.log(`built dist/${name}`);
  } else {
    console.error(
      `compile ${name}: skipped (deno compile needs the denort runtime from dl.deno.land, ` +
        "or DENORT_BIN pointing at it)",
    );
  }
}

const sums = built.map((f) => {
  const h = createHash("sha256").update(Deno.readFileSync(`${dist}/${f}`)).digest("hex");
  return `${h}  ${f}`;
}).join("\n") + "\n";
Deno.writeTextFileSync(`${dist}/SHA256SUMS`, sums);
console.log("wrote dist/SHA256SUMS");
let keyPath: string | undefined;
try {
  keyPath = Deno.env.get("AGENTTEAMS_RELEASE_KEY");
} catch {
  keyPath = undefined;
}
if (keyPath) {
  const key = await importPrivatePem(Deno.readTextFileSync(keyPath));
  Deno.writeTextFileSync(`${dist}/SHA256SUMS.sig`, (await signHex(key, sums)) + "\n");
  console.log("wrote dist/SHA256SUMS.sig");
}
