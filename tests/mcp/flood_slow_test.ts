/**
 * A call flood against a real `agentteams mcp readfs`: tens of thousands of calls written as fast
 * as the pipe takes them, many of them 256 KiB reads, read back slowly. The server answers one
 * call at a time and reads the next line only after writing its answer, so the flood waits in
 * the pipe and its memory stays bounded: the peak (VmHWM) is printed and asserted against a
 * ceiling, beside the peak of the same server after one call.
 */
import assert from "node:assert/strict";
import { initLines, permissionsLine, raw, serverEnv } from "./_client.ts";
import { fileTempDir } from "../_helpers/mod.ts";

function peakKiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  assert.ok(m !== null, "needs /proc/PID/status (Linux)");
  return Number(m[1]);
}

Deno.test("mcp readfs: a call flood is answered in full with bounded memory", async () => {
  const base = fileTempDir("mcp-flood");
  const root = `${base}/proj`;
  Deno.mkdirSync(`${root}/src`, { recursive: true });
  Deno.mkdirSync(`${base}/home`);
  Deno.writeTextFileSync(`${root}/src/small.txt`, "small\n");
  Deno.writeFileSync(`${root}/src/cap.txt`, new Uint8Array(256 * 1024).fill(120));
  const env = serverEnv(`${base}/home`);
  const argv = await permissionsLine(["mcp", "readfs"], root, env);
  const extra = Deno.env.get("FLOOD_V8");
  if (extra !== undefined) argv.splice(2, 0, `--v8-flags=${extra}`);
  const p = raw(argv, root, env);
  await p.send(initLines(0));
  await p.read(1);
  const small = (id: number, path: string) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "read_file", arguments: { path } },
    }) + "\n";
  await p.send(small(1, "src/cap.txt"));
  await p.read(1);
  const after1 = peakKiB(p.pid);
  const N = Number(Deno.env.get("FLOOD_N") ?? 20_000);
  // Every 10th call reads the 256 KiB file: 2000 answers of ~256 KiB, 500 MiB in all.
  const sending = (async () => {
    let batch = "";
    for (let i = 2; i < N + 2; i++) {
      batch += small(i, i % 10 === 0 ? "src/cap.txt" : "src/small.txt");
      if (batch.length > 64 * 1024) {
        await p.send(batch);
        batch = "";
      }
    }
    await p.send(batch);
  })();
  let seen = 0;
  let errors = 0;
  while (seen < N) {
    const got = await p.read(Math.min(500, N - seen));
    errors += got.filter((m) => m.error !== undefined).length;
    seen += got.length;
  }
  await sending;
  const peak = peakKiB(p.pid);
  await p.closeIn();
  assert.equal((await p.status()).code, 0);
  assert.equal(errors, 0);
  console.log(
    `readfs flood: ${N} calls; peak RSS ${peak} KiB (after one 256 KiB read: ${after1} KiB)`,
  );
  // A server that queued the flood would hold its 500 MiB of answers; this one holds one at a
  // time (what is above the one-call peak is V8 letting garbage wait: under
  // FLOOD_V8=--max-old-space-size=48 an 80,000-call flood peaks where a 40,000-call one does).
  assert.ok(peak < 200 * 1024, `peak ${peak} KiB (after one call: ${after1} KiB)`);
});
