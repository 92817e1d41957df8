/**
 * `agentteams run` end to end with a network list (`network: ["localhost:PORT"]`): the real CLI,
 * the real bwrap, the proxy and the forwarder, against local servers only. The allowed name is
 * reached through the proxy; another name, a raw address and a direct connection fail; each
 * refused `host:port` lands in the run's ledger row and its result; the tool itself keeps no
 * network permission (the printed `permissions run` line has no --allow-net and still works).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  DENO_BIN_DIR,
  jsonOut,
  newRows,
  withWorld,
  workerBrief,
  type World,
  type WorldPaths,
} from "./_run_helpers.ts";
import { refusals } from "../_helpers/mod.ts";

Deno.statSync("/usr/bin/curl"); // the test's client: fails loudly when missing

function startServer(seen: string[]): { port: number; stop: () => Promise<void> } {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      seen.push(new URL(req.url).pathname);
      return new Response("hello through the allowlist\n");
    },
  );
  return {
    port: server.addr.port,
    stop: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

function brief(port: number) {
  return (p: WorldPaths) =>
    workerBrief(p, [{
      prefix: ["/usr/bin/curl", "-sS", "-f", "--max-time", "20"],
      args: [`http://(localhost|other[.]invalid|127[.]0[.]0[.]1):${port}/[a-z]+`],
      network: [`localhost:${port}`],
    }, {
      prefix: ["/usr/bin/curl", "-sS", "--max-time", "20", "--noproxy", "*"],
      args: [`http://127[.]0[.]0[.]1:${port}/[a-z]+`],
      network: [`localhost:${port}`],
    }]);
}

function runPrinted(w: World, line: string): Promise<Deno.CommandOutput> {
  return new Deno.Command("/bin/sh", {
    args: ["-c", line],
    cwd: w.project,
    clearEnv: true,
    env: {
      ...w.env,
      PATH: `${DENO_BIN_DIR}:/usr/bin:/bin`,
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache/deno"),
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
}

Deno.test("run with a network list: the allowed name through the proxy; others refused and recorded", async () => {
  const seen: string[] = [];
  const server = startServer(seen);
  const port = server.port;
  try {
    await withWorld("netlist", { brief: brief(port) }, async (w) => {
      const ok = await w.run({
        argv: ["/usr/bin/curl", "-sS", "-f", "--max-time", "20", `http://localhost:${port}/ok`],
      }, {
        flags: ["--json"],
      });
      assert.equal(ok.code, 0, ok.stderr);
      const okOut = jsonOut(ok);
      assert.equal(okOut.stdout, "hello through the allowlist\n");
      assert.deepEqual(okOut.network_refused, []);
      const okRow = newRows(w, ok).find((r) => r.action === "run-request");
      assert.ok(okRow, JSON.stringify(newRows(w, ok)));
      assert.deepEqual(okRow.network_refused, []);

      for (const host of ["other.invalid", "127.0.0.1"]) {
        const r = await w.run({
          argv: ["/usr/bin/curl", "-sS", "-f", "--max-time", "20", `http://${host}:${port}/no`],
        }, {
          flags: ["--json"],
        });
        const out = jsonOut(r);
        assert.equal(out.exit, 22, r.stdout); // curl -f: the proxy's 403
        assert.deepEqual(out.network_refused, [`${host}:${port}`]);
        const row = newRows(w, r).find((x) => x.action === "run-request");
        assert.deepEqual(row?.network_refused, [`${host}:${port}`]);
      }
      // A direct connection: the namespace has no route out (and the proxy saw nothing).
      const direct = await w.run({
        argv: [
          "/usr/bin/curl",
          "-sS",
          "--max-time",
          "20",
          "--noproxy",
          "*",
          `http://127.0.0.1:${port}/direct`,
        ],
      }, {
        flags: ["--json"],
      });
      const dOut = jsonOut(direct);
      assert.notEqual(dOut.exit, 0, direct.stdout);
      assert.deepEqual(dOut.network_refused, []);
      assert.deepEqual(seen, ["/ok"]);
      await w.verifyOk();
    });
  } finally {
    await server.stop();
  }
});

Deno.test("run with a network list under the printed permissions line: no --allow-net, and it works", async () => {
  const seen: string[] = [];
  const server = startServer(seen);
  const port = server.port;
  try {
    await withWorld("netlist-perm", { brief: brief(port) }, async (w) => {
      const nonce = await w.dispatch();
      const file = await w.artifact({
        argv: ["/usr/bin/curl", "-sS", "-f", "--max-time", "20", `http://localhost:${port}/perm`],
      }, nonce);
      const p = await w.cli(["permissions", "run", "--", file, "--project", w.project]);
      assert.equal(p.code, 0, p.stderr);
      const line = p.stdout.trim();
      assert.ok(!line.includes("--allow-net"), line);
      assert.ok(!/(^| )-A( |$)|--allow-all/.test(line), line);
      const r = await runPrinted(w, line);
      const stderr = new TextDecoder().decode(r.stderr);
      assert.equal(r.code, 0, stderr);
      assert.deepEqual(seen, ["/perm"]);
    });
  } finally {
    await server.stop();
  }
});

Deno.test("brief check: a bad network rule is refused naming the rule", async () => {
  for (const bad of ["*.com", "10.0.0.1", "example.com:0", "*"]) {
    await withWorld("netlist-lint", {
      brief: (p) => workerBrief(p, [{ prefix: ["/usr/bin/curl"], network: [bad] }]),
      keys: false,
    }, async (w) => {
      const r = await w.cli(["brief", "check", "--project", w.project]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.ok((r.stdout + r.stderr).includes(JSON.stringify(bad)), r.stdout + r.stderr);
      assert.ok(
        refusals(r.stderr).length + (r.stdout.includes("POLICY_LINT") ? 1 : 0) > 0,
        r.stderr,
      );
    });
  }
});
