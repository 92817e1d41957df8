/**
 * The MCP readfs section of `deno task bench`, run as its own process with the tests' lockfile
 * (`deno run --lock=tests/deno.lock`), since the SDK client it drives is a test-only dependency:
 * a `read_file` round trip through the official MCP SDK client over stdio to `agentteams mcp
 * readfs` (launched by its `permissions` line), against a floor of reading the same file directly
 * and hashing it (what the tool does for the answer), rounds interleaved. Prints its rows.
 *
 * Usage: deno run --allow-all --lock=tests/deno.lock scripts/bench/mcp_readfs.ts [--quick]
 *
 * @module
 */
import { createHash } from "node:crypto";
import { Client } from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
import { StdioClientTransport } from "npm:@modelcontextprotocol/sdk@1.32.2/client/stdio.js";

const quick = Deno.args.includes("--quick");
const main = new URL("../../main.ts", import.meta.url).pathname;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function row(label: string, value: string, note = ""): void {
  console.log(`  ${label.padEnd(58)} ${value.padStart(14)}  ${note}`);
}

const fmt = (ms: number) => ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(3)} ms`;

const work = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "agentteams-bench-mcp-" }));
try {
  Deno.mkdirSync(`${work}/src`);
  Deno.mkdirSync(`${work}/home`);
  const sizes = [["1 KiB", 1024], ["64 KiB", 64 * 1024], ["256 KiB", 256 * 1024]] as const;
  for (const [, n] of sizes) {
    Deno.writeFileSync(`${work}/src/f${n}.txt`, new Uint8Array(n).fill(97));
  }
  const env = { HOME: `${work}/home`, PATH: "/usr/bin:/bin", AGENTTEAMS_BROAD_OK: "1" };
  const printed = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", main, "permissions", "--json", "mcp", "readfs", "--root", "."],
    cwd: work,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const exec = (JSON.parse(new TextDecoder().decode(printed.stdout)) as { exec: string[] }).exec;
  const client = new Client({ name: "agentteams-bench", version: "1" });
  await client.connect(
    new StdioClientTransport({ command: exec[0], args: exec.slice(1), cwd: work, env }),
  );
  console.log("\nMCP readfs: read_file through the SDK client over stdio vs reading the file");
  try {
    const rounds = quick ? 50 : 300;
    for (const [label, n] of sizes) {
      const path = `src/f${n}.txt`;
      const floor: number[] = [];
      const ours: number[] = [];
      for (let i = 0; i < 10; i++) {
        await client.callTool({ name: "read_file", arguments: { path } });
      }
      for (let i = 0; i < rounds; i++) {
        let t = performance.now();
        createHash("sha256").update(Deno.readFileSync(`${work}/${path}`)).digest("hex");
        floor.push(performance.now() - t);
        t = performance.now();
        const r = await client.callTool({ name: "read_file", arguments: { path } });
        ours.push(performance.now() - t);
        if (r.isError === true) throw new Error(`read_file ${path} refused`);
      }
      const f = median(floor);
      const o = median(ours);
      row(`floor ${label}: read the file and sha256 it`, fmt(f));
      row(`read_file ${label}: SDK client round trip`, fmt(o), `${(o / f).toFixed(0)}x the floor`);
    }
  } finally {
    await client.close();
  }
} finally {
  Deno.removeSync(work, { recursive: true });
}
