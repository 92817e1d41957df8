/**
 * The network-list section of `deno task bench`: a 100 MiB download from a local HTTP server by
 * curl run as a `network: [...]` entry's command is (`prepareRun`, then `executeRun` timed: the
 * proxy's start, bwrap with its own network namespace, the forwarder, the stacked filter), against
 * the same download by curl unconfined on the host; rounds interleaved, medians.
 *
 * @module
 */
import { parseNetworkRules } from "../../lib/policy/network_rules.ts";
import { executeRun, prepareRun } from "../../lib/sandbox/confined_run.ts";
import { makePrivateTmpdir, removePrivateTmpdir } from "../../lib/sandbox/run_dir.ts";

/** What the section needs from the bench. */
export interface NetProxyBenchContext {
  /** Scratch space. */
  readonly work: string;
  /** Fewer rounds. */
  readonly quick: boolean;
  /** Prints (and records) one row. */
  readonly row: (label: string, value: string, note?: string) => void;
}

const SIZE = 100 * 1024 * 1024;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Runs the section.
 *
 * @example
 * ```ts ignore
 * // Not run: it starts servers, a proxy and bwrap; scripts/bench.ts calls it.
 * import { netProxySection } from "./net_proxy.ts";
 * await netProxySection({ work: "/tmp/w", quick: true, row: console.log });
 * ```
 */
export async function netProxySection(ctx: NetProxyBenchContext): Promise<void> {
  console.log("\nnetwork list: a 100 MiB download through the proxy vs curl unconfined");
  const body = new Uint8Array(SIZE).fill(120);
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    () => new Response(body),
  );
  const port = server.addr.port;
  const parsed = parseNetworkRules([`localhost:${port}`]);
  if (!parsed.ok) throw new Error(parsed.problem);
  const url = `http://localhost:${port}/big`;
  const curl = ["/usr/bin/curl", "-sS", "-f", "-o", "/dev/null", url];
  // The project a confined run needs (nothing is written there).
  const project = Deno.makeTempDirSync({ dir: ctx.work, prefix: "netproxy-" });
  const proxiedOnce = async (): Promise<number> => {
    const tmpdir = makePrivateTmpdir();
    try {
      const prepared = prepareRun({
        project,
        home: ctx.work,
        tmpdir,
        backend: "bwrap",
        agent: { exec: ["/usr/bin"], write: [] },
        cwd: ".",
        argv: curl,
        env: { PATH: "/usr/bin:/bin" },
        network: false,
        networkAllow: parsed.rules,
        protectedPaths: [],
        hiddenDirs: [],
        controlPlane: { git: [] },
        timeoutMs: 120_000,
      });
      const t = performance.now();
      const r = await executeRun(prepared);
      if (r.exit !== 0) {
        throw new Error(`proxied curl failed: ${new TextDecoder().decode(r.stderr)}`);
      }
      return performance.now() - t;
    } finally {
      removePrivateTmpdir(tmpdir);
    }
  };
  const time = async (program: string, args: string[]): Promise<number> => {
    const t = performance.now();
    const out = await new Deno.Command(program, { args, stdout: "null", stderr: "piped" }).output();
    if (!out.success) throw new Error(`${program}: ${new TextDecoder().decode(out.stderr)}`);
    return performance.now() - t;
  };
  const direct: number[] = [];
  const proxied: number[] = [];
  try {
    await time(curl[0], curl.slice(1));
    await proxiedOnce();
    for (let i = 0; i < (ctx.quick ? 3 : 7); i++) {
      direct.push(await time(curl[0], curl.slice(1)));
      proxied.push(await proxiedOnce());
    }
  } finally {
    ac.abort();
    await server.finished;
  }
  const d = median(direct);
  const p = median(proxied);
  ctx.row("curl 100 MiB unconfined (floor)", `${d.toFixed(0)} ms`);
  ctx.row(
    "curl 100 MiB as a network-list run (bwrap, proxy, forwarder)",
    `${p.toFixed(0)} ms`,
    `${(p / d).toFixed(2)}x`,
  );
}
