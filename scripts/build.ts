/**
 * `deno task compile`: release artifacts in dist/, for a local build (the tagged release runs the
 * same pieces as separate steps: .github/workflows/release.yml and scripts/release_*.ts).
 *
 * 1. `dist/agentteams/`: the code-split bundle (scripts/bundle.ts), run with the release flags
 *    (the line this prints); a command reads and loads only its own chunks.
 * 2. `dist/agentteams-<target>`: self-contained binaries (`deno compile`, the argv of
 *    scripts/release_compile.ts: the target's `releaseFlags(os)` baked in; the host's target when
 *    none is named, never `dist/agentteams`, which is the bundle's folder). `deno compile` needs
 *    the `denort` runtime: this task takes it only from `DENORT_BIN` and, without it, reports each
 *    binary as not built with the reason. A target that does not build is reported with
 *    `deno compile`'s own message, and the task exits 1 (the bundle and its sums are still written).
 * 3. `dist/SHA256SUMS`, and `dist/SHA256SUMS.minisig` (minisign's format, lib/release/) when
 *    `AGENTTEAMS_RELEASE_KEY` names a PKCS#8 PEM Ed25519 private key: verify with
 *    `agentteams release verify --pubkey PUB dist` or `minisign -V -p PUB -m dist/SHA256SUMS`.
 *
 * Usage: deno task compile [--target x86_64-unknown-linux-gnu ...] [--out DIR (default dist)]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { fileSha256, sumsText } from "../lib/release/sums.ts";
import { signRelease } from "../lib/release/release_dir.ts";
import { bundleRunLine, bundleTo } from "./bundle.ts";
import { compileArgv, runtimeProblem } from "./release_compile.ts";
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

// Each target's permissions (lib/permissions.ts, releaseFlags(os)), as the release workflow's.
const failed: string[] = [];
let denortBin: string | undefined;
try {
  denortBin = Deno.env.get("DENORT_BIN");
} catch {
  denortBin = undefined;
}
const noRuntime = runtimeProblem(denortBin);
for (const target of targets) {
  const name = `agentteams-${target}`;
  let argv: string[];
  try {
    argv = compileArgv(target, dist);
  } catch (e) {
    failed.push(name);
    console.error(`compile ${name}: not built (${(e as Error).message})`);
    continue;
  }
  if (noRuntime !== null) {
    failed.push(name);
    console.error(`compile ${name}: not built (${noRuntime})`);
    continue;
  }
  const r = await sh(argv);
  if (r.ok) {
    built.push(name);
    console.log(`built ${dist}/${name}; run it with:\n  ${dist}/${name} --help`);
  } else {
    failed.push(name);
    // deno compile's own message was printed above; add the one cause it does not name.
    const runtime = /dl\.deno\.land|denort|download/i.test(r.err)
      ? " (it needs the denort runtime: DENORT_BIN naming a denort binary of the same Deno " +
        "version, for the target)"
      : "";
    console.error(`compile ${name}: not built${runtime}`);
  }
}

const sums = sumsText(new Map(built.map((f) => [f, fileSha256(dist, f)])));
Deno.writeTextFileSync(`${dist}/SHA256SUMS`, sums);
console.log(`wrote ${dist}/SHA256SUMS`);
let keyPath: string | undefined;
try {
  keyPath = Deno.env.get("AGENTTEAMS_RELEASE_KEY");
} catch {
  keyPath = undefined;
}
if (keyPath) {
  const r = await signRelease(dist, Deno.readTextFileSync(keyPath), new Date());
  console.log(`wrote ${r.signature}`);
}
if (failed.length > 0) {
  console.error(`deno task compile: ${failed.join(", ")} not built; see the messages above`);
  Deno.exit(1);
}
