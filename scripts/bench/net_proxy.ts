/**
 * The network-list section of `deno task bench`: a 100 MiB download from a local HTTP server by
 * curl inside bwrap through the run's proxy and forwarder (the plan a `network: [...]` entry
 * gets: its own network namespace, the socket on a fresh /run, the stacked filter), against the
 * same download by curl unconfined on the host; rounds interleaved, medians.
 *
 * @module
 */
import { parseNetworkRules } from "../../lib/policy/network_rules.ts";
import { BWRAP_BASE_MOUNTS, bwrapIsolationFlags } from "../../lib/sandbox/bwrap.ts";
import { forwarderArgv, proxyEnv, SANDBOX_PROXY_SOCKET } from "../../lib/sandbox/net_forwarder.ts";
import { startNetProxy } from "../../lib/sandbox/net_proxy.ts";
import { commandFilter } from "../../lib/sandbox/seccomp.ts";

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
 * // Starts servers, a proxy and bwrap; scripts/bench.ts calls it.
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
  const sock = `${ctx.work}/bench-net.sock`;
  const proxy = await startNetProxy({
    socketPath: sock,
    rules: parsed.rules,
    perl: "/usr/bin/perl",
  });
  const url = `http://localhost:${port}/big`;
  const curl = ["/usr/bin/curl", "-sS", "-f", "-o", "/dev/null", url];
  const env = Object.entries(proxyEnv()).flatMap(([k, v]) => ["--setenv", k, v]);
  const confined = [
    ...bwrapIsolationFlags(false),
    ...BWRAP_BASE_MOUNTS,
    "--tmpfs",
    "/run",
    "--bind",
    sock,
    SANDBOX_PROXY_SOCKET,
    "--clearenv",
    "--setenv",
    "PATH",
    "/usr/bin:/bin",
    ...env,
    "--",
    ...forwarderArgv(
      "/usr/bin/perl",
      Deno.build.arch,
      commandFilter(Deno.build.arch, { network: false }),
      SANDBOX_PROXY_SOCKET,
      curl,
    ),
  ];
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
    await time("/usr/bin/bwrap", confined);
    for (let i = 0; i < (ctx.quick ? 3 : 7); i++) {
      direct.push(await time(curl[0], curl.slice(1)));
      proxied.push(await time("/usr/bin/bwrap", confined));
    }
  } finally {
    await proxy.close();
    ac.abort();
    await server.finished;
  }
  const d = median(direct);
  const p = median(proxied);
  ctx.row("curl 100 MiB unconfined (floor)", `${d.toFixed(0)} ms`);
  ctx.row(
    "curl 100 MiB in bwrap through the proxy",
    `${p.toFixed(0)} ms`,
    `${(p / d).toFixed(2)}x`,
  );
}
