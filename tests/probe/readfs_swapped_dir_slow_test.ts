/**
 * Probe 22e, finding E3 (tests/probe/PROBE_22E_REPORT.md): the `agentteams_readfs` MCP server,
 * which the host starts outside the session's sandbox, read the operator's key dir through a
 * folder of the project the session swapped for a link between the server's checks and its open.
 * The session (its Bash in Claude's sandbox may write the project) keeps exchanging `src/d` (a real
 * folder holding a file `k`) with `src/l` (a link to the key dir) while the orchestrator's model
 * calls `read_file src/d/k`: the server resolved the name inside the root, then opened it by path
 * while it led through the link, and checked again once it led through the folder (`list_dir`
 * and `find` listed the key dir's names the same way). Now a read or a listing counts only when
 * no folder on its path changed while it was made. The server runs under exactly
 * the flags `agentteams permissions mcp readfs` prints, and the test asserts that not one answer
 * carries the key's bytes and that the tree holds what the test itself made.
 */
import assert from "node:assert/strict";
import { connect, permissionsLine, serverEnv, snapshot, textOf } from "../mcp/_client.ts";

const SECRET = "5ec7e7".repeat(10);
/** How long the session swaps (the server is asked again and again meanwhile). */
const SWAP_MS = 8000;

/** A loop that exchanges `a` and `b` with renameat2(RENAME_EXCHANGE) until it is killed. */
const SWAP =
  "my ($a, $b) = @ARGV; while (1) { syscall(316, -100, $a, -100, $b, 2) == 0 or die $!; }";

Deno.test("probe 22e: a folder swapped for a link to the key dir while read_file reads never yields the key", async () => {
  assert.equal(Deno.build.arch, "x86_64", "the swap loop calls renameat2 by its x86_64 number");
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "p22e-readfs-" }));
  const root = `${base}/proj`, keys = `${base}/keys`, home = `${base}/home`;
  Deno.mkdirSync(`${root}/src/d`, { recursive: true });
  Deno.mkdirSync(home);
  Deno.mkdirSync(keys, { mode: 0o700 });
  Deno.writeTextFileSync(`${keys}/proposal-ledger.key`, SECRET);
  Deno.writeTextFileSync(`${keys}/only-in-the-key-dir.pem`, SECRET);
  Deno.writeTextFileSync(`${root}/src/d/proposal-ledger.key`, "decoy\n");
  Deno.symlinkSync(keys, `${root}/src/l`);
  const env = serverEnv(home, { AGENTTEAMS_KEY_DIR: keys });
  const c = await connect(await permissionsLine(["mcp", "readfs"], root, env), root, env);
  const swapper = new Deno.Command("perl", {
    args: ["-e", SWAP, `${root}/src/d`, `${root}/src/l`],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let calls = 0, leaked = 0, listed = 0, decoys = 0;
  const tool = async (name: string, path: string) =>
    textOf(await c.client.callTool({ name, arguments: { path } }));
  try {
    const end = Date.now() + SWAP_MS;
    while (Date.now() < end) {
      calls++;
      const text = await tool("read_file", "src/d/proposal-ledger.key");
      if (text.includes(SECRET)) leaked++;
      if (text.includes("decoy")) decoys++;
      // The key dir's names are not listed either (list_dir, find, stat look the same way).
      if ((await tool("list_dir", "src/d")).includes("only-in-the-key-dir")) listed++;
      if ((await tool("find", "src")).includes("only-in-the-key-dir")) listed++;
    }
  } finally {
    swapper.kill("SIGKILL");
    await swapper.output();
    await c.close();
  }
  assert.equal(leaked, 0, `${leaked} of ${calls} read_file answers carried the key dir's file`);
  assert.equal(listed, 0, `${listed} listings of ${calls * 2} named the key dir's file`);
  // The server wrote nothing: the tree is the folder and the link the test made, in some order.
  assert.match(snapshot(root), /proposal-ledger\.key/);
  // After the swapping stops, the decoy reads again (a settled folder is read as before).
  const c2 = await connect(await permissionsLine(["mcp", "readfs"], root, env), root, env);
  try {
    const real = Deno.lstatSync(`${root}/src/d`).isDirectory ? "src/d" : "src/l";
    await new Promise((r) => setTimeout(r, 200));
    const text = textOf(
      await c2.client.callTool({
        name: "read_file",
        arguments: { path: `${real}/proposal-ledger.key` },
      }),
    );
    assert.ok(text.includes("decoy"), text);
  } finally {
    await c2.close();
    Deno.removeSync(base, { recursive: true });
  }
  console.log(`${calls} calls, ${decoys} decoy reads during the swaps`);
});
