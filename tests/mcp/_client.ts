/**
 * The MCP servers as the tests drive them: launched by the line `agentteams permissions mcp …`
 * prints (its `--json` `exec` array, so the server runs under exactly those Deno flags), and
 * spoken to by the official TypeScript SDK's client over stdio. Raw-byte helpers are here too,
 * for the inputs no real client would send (malformed JSON-RPC, batches, reused ids).
 */
import { createHash } from "node:crypto";
import { Client } from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
import { StdioClientTransport } from "npm:@modelcontextprotocol/sdk@1.32.2/client/stdio.js";

export { Client };

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const MAIN = `${REPO}/main.ts`;

/** The launch line `permissions` prints for `words` (run from `cwd`), as an argv. */
export async function permissionsLine(
  words: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "permissions", "--json", ...words],
    cwd,
    env: { ...env, AGENTTEAMS_BROAD_OK: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`permissions failed: ${new TextDecoder().decode(out.stderr)} ${text}`);
  }
  const parsed = JSON.parse(text) as { exec?: unknown };
  if (!Array.isArray(parsed.exec)) throw new Error(`permissions --json printed no exec: ${text}`);
  return parsed.exec as string[];
}

/** A connected SDK client and what it was launched with. */
export interface Connected {
  readonly client: Client;
  readonly argv: readonly string[];
  readonly stderr: () => string;
  close(): Promise<void>;
}

/** The environment a server gets: a HOME and key dir of the test's, nothing inherited. */
export function serverEnv(
  home: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return { HOME: home, PATH: "/usr/bin:/bin", ...extra };
}

/** Launches the server `argv` and connects the SDK client to it. */
export async function connect(
  argv: readonly string[],
  cwd: string,
  env: Record<string, string>,
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: argv[0],
    args: argv.slice(1),
    cwd,
    env,
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Uint8Array) => {
    err += new TextDecoder().decode(d);
  });
  const client = new Client({ name: "agentteams-tests", version: "1.0.0" });
  await client.connect(transport);
  return { client, argv, stderr: () => err, close: () => client.close() };
}

/** The text of a tool result's content blocks, joined. */
export function textOf(r: { content?: unknown }): string {
  const blocks = (r.content ?? []) as { type: string; text?: string }[];
  return blocks.map((b) => b.text ?? "").join("\n");
}

/** A raw server process: lines in, lines out. */
export interface Raw {
  send(text: string): Promise<void>;
  /** The next `n` lines of stdout, parsed. */
  read(n: number): Promise<Record<string, unknown>[]>;
  closeIn(): Promise<void>;
  status(): Promise<Deno.CommandStatus>;
  readonly pid: number;
}

/** Launches `argv` with piped stdio, for raw JSON-RPC bytes. */
export function raw(argv: readonly string[], cwd: string, env: Record<string, string>): Raw {
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd,
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  let buf = "";
  const dec = new TextDecoder();
  return {
    pid: child.pid,
    send: (t) => writer.write(new TextEncoder().encode(t)),
    async read(n) {
      const out: Record<string, unknown>[] = [];
      while (out.length < n) {
        const nl = buf.indexOf("\n");
        if (nl >= 0) {
          out.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`stdout ended after ${out.length} of ${n} lines`);
        buf += dec.decode(value, { stream: true });
      }
      return out;
    },
    closeIn: () => writer.close(),
    async status() {
      // Whatever is left unread is drained so the process can end.
      (async () => {
        try {
          while (!(await reader.read()).done) { /* drain */ }
        } catch { /* closed */ }
      })();
      return await child.status;
    },
  };
}

/** The initialize request and the initialized notification, as two raw lines. */
export function initLines(id: number | string = 0): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  }) + "\n" + JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n";
}

/** Every file and directory below `dir` with its bytes (files) or entry names, for "nothing written". */
export function snapshot(dir: string): string {
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    const names = [...Deno.readDirSync(d)].map((e) => e.name).sort();
    for (const n of names) {
      const p = `${d}/${n}`;
      const st = Deno.lstatSync(p);
      const r = rel === "" ? n : `${rel}/${n}`;
      if (st.isSymlink) out.push(`l ${r} -> ${Deno.readLinkSync(p)}`);
      else if (st.isDirectory) {
        out.push(`d ${r} ${st.mtime?.getTime()}`);
        walk(p, r);
      } else if (st.isFile) {
        const sum = createHash("sha256").update(Deno.readFileSync(p)).digest("hex");
        out.push(`f ${r} ${st.size} ${st.mtime?.getTime()} ${sum}`);
      } else out.push(`o ${r}`);
    }
  };
  walk(dir, "");
  return out.join("\n");
}
