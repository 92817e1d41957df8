/**
 * The audit and the readfs server's launch lines: a Goose recipe whose `agentteams_readfs` runs
 * `agentteams mcp readfs` (the installed launcher, or the very line `agentteams permissions mcp
 * readfs --root .` prints) is accepted; one wired to anything else, the earlier tool's
 * `python3 … goose-readfs-mcp.py` line included (this tool never writes that script), is refused
 * (`GOOSE_READFS`), by the pure check and by the real `agentteams audit`.
 */
import assert from "node:assert/strict";
import { checkGoose } from "../../lib/audit/check_goose.ts";
import { readfsLaunchProblem } from "../../lib/mcp/readfs_launch.ts";
import { permissionsLine, serverEnv } from "./_client.ts";
import { fileTempDir } from "../_helpers/mod.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

function recipe(cmd: string, args: readonly string[]): string {
  return [
    "version: 1.0.0",
    "title: Reviewer",
    "description: Reviews",
    "instructions: |",
    "  Review the code.",
    "  ## Write Policy: Return Proposals, Never Write",
    "extensions:",
    "  - type: stdio",
    "    name: agentteams_readfs",
    `    cmd: ${JSON.stringify(cmd)}`,
    `    args: ${JSON.stringify(args)}`,
    "    available_tools: [read_file, list_dir, find, grep, stat]",
    "",
  ].join("\n");
}

/** The earlier tool's launch: refused, since nothing this tool writes provides its script. */
const EARLIER = ["-I", "-S", ".agentteams/bin/goose-readfs-mcp.py", "--root", "."];

const codes = (text: string) => checkGoose(text, "reviewer").map((s) => s.code);

Deno.test("readfsLaunchProblem: the two accepted lines", () => {
  assert.equal(readfsLaunchProblem("agentteams", ["mcp", "readfs", "--root", "."]), null);
  const line = [
    "run",
    "--no-prompt",
    "--allow-read=/p,/opt/at/lib",
    "--allow-env=AGENTTEAMS_KEY_DIR,HOME",
    "/opt/at/main.ts",
    "mcp",
    "readfs",
    "--project",
    "/p",
    "--root",
    ".",
  ];
  assert.equal(readfsLaunchProblem("/usr/bin/deno", line), null);
});

Deno.test("readfsLaunchProblem: everything else is refused, each with its reason", () => {
  const ok = [
    "run",
    "--no-prompt",
    "--allow-read=/p,/opt/at/lib",
    "--allow-env=AGENTTEAMS_KEY_DIR,HOME",
    "/opt/at/main.ts",
    "mcp",
    "readfs",
    "--project",
    "/p",
    "--root",
    ".",
  ];
  const swap = (i: number, v: string) => ok.map((x, j) => j === i ? v : x);
  const bad: [string | null, readonly string[] | null, RegExp][] = [
    [null, null, /no cmd/],
    ["sh", ["-c", "agentteams mcp readfs --root ."], /launches sh/],
    ["agentteams", ["mcp", "readfs", "--root", "/"], /launches agentteams/],
    ["agentteams", ["mcp", "runner", "--agent", "w"], /launches agentteams/],
    ["python3", ["-S", ".agentteams/bin/goose-readfs-mcp.py", "--root", "."], /launches python3/],
    ["python3", EARLIER, /launches python3/],
    ["deno", ok, /absolute deno/],
    ["/usr/bin/../bin/deno", ok, /absolute deno/],
    ["/usr/bin/deno", ["eval", ...ok.slice(1)], /deno run/],
    ["/usr/bin/deno", ["run", "-A", ...ok.slice(1)], /passes -A/],
    ["/usr/bin/deno", [...ok.slice(0, 2), "--allow-write=/p", ...ok.slice(2)], /--allow-write/],
    ["/usr/bin/deno", [...ok.slice(0, 2), "--allow-run=/bin/sh", ...ok.slice(2)], /--allow-run/],
    ["/usr/bin/deno", [...ok.slice(0, 2), "--allow-net", ...ok.slice(2)], /--allow-net/],
    ["/usr/bin/deno", [...ok.slice(0, 2), "--allow-sys", ...ok.slice(2)], /--allow-sys/],
    ["/usr/bin/deno", swap(2, "--allow-read=/"), /may read \//],
    ["/usr/bin/deno", swap(2, "--allow-read=/p,/home/op/.config/agentteams/keys"), /may read/],
    ["/usr/bin/deno", swap(2, "--allow-read=/p/../etc"), /may read/],
    ["/usr/bin/deno", swap(3, "--allow-env=PATH"), /environment/],
    ["/usr/bin/deno", swap(1, "--quiet"), /passes --quiet/],
    ["/usr/bin/deno", swap(4, "opt/at/main.ts"), /entry/],
    ["/usr/bin/deno", swap(4, "/opt/at/evil.ts"), /entry/],
    ["/usr/bin/deno", swap(6, "runner"), /mcp readfs/],
    ["/usr/bin/deno", swap(10, "/"), /mcp readfs/],
    ["/usr/bin/deno", swap(8, "p"), /--project/],
    ["/usr/bin/deno", [...ok, "--extra"], /mcp readfs/],
  ];
  for (const [cmd, args, want] of bad) {
    assert.match(readfsLaunchProblem(cmd, args) ?? "accepted", want, `${cmd} ${args?.join(" ")}`);
  }
});

Deno.test("checkGoose: a recipe wired to agentteams mcp readfs passes; one wired elsewhere is GOOSE_READFS", async () => {
  const base = fileTempDir("mcp-audit");
  Deno.mkdirSync(`${base}/home`);
  const printed = await permissionsLine(
    ["mcp", "readfs", "--root", "."],
    base,
    serverEnv(`${base}/home`),
  );
  assert.deepEqual(codes(recipe(printed[0], printed.slice(1))), [], printed.join(" "));
  assert.deepEqual(codes(recipe("agentteams", ["mcp", "readfs", "--root", "."])), []);
  for (
    const [cmd, args] of [
      ["python3", EARLIER],
      ["/bin/sh", ["-c", "agentteams mcp readfs --root ."]],
      [printed[0], [printed[1], "--allow-write=/", ...printed.slice(2)]],
      ["npx", ["-y", "@modelcontextprotocol/server-filesystem", "."]],
    ] as const
  ) {
    assert.deepEqual(codes(recipe(cmd, args)), ["GOOSE_READFS"], `${cmd} ${args.join(" ")}`);
  }
});

Deno.test("agentteams audit: the recipe wired to mcp readfs is clean; wired elsewhere, refused", async () => {
  const base = fileTempDir("mcp-audit-cli");
  const run = async (text: string) => {
    Deno.mkdirSync(`${base}/p/.goose/recipes`, { recursive: true });
    Deno.writeTextFileSync(`${base}/p/.goose/recipes/reviewer.yaml`, text);
    // The switch on, for Goose: an error finding fails the audit.
    Deno.writeTextFileSync(
      `${base}/p/agentteams.json`,
      JSON.stringify({
        write_policy: "orchestrator-only",
        privilege_profile: "confined",
        write_policy_frameworks: ["goose"],
      }),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "audit", `${base}/p`, "--project", `${base}/p`, "--format", "json"],
      env: { AGENTTEAMS_BROAD_OK: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const json = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      findings?: { code: string }[];
    };
    return { code: out.code, found: (json.findings ?? []).map((f) => f.code) };
  };
  const clean = await run(recipe("agentteams", ["mcp", "readfs", "--root", "."]));
  assert.deepEqual(clean, { code: 0, found: [] });
  const other = await run(recipe("/usr/bin/env", ["agentteams", "mcp", "readfs", "--root", "."]));
  assert.equal(other.code, 1);
  assert.deepEqual(other.found, ["GOOSE_READFS"]);
});
