/**
 * The `agentteams_readfs` MCP server: the reading tools a Goose (or any) agent may use under the
 * switch, with the names the audit accepts (`read_file list_dir find grep stat`). Each path
 * argument goes through `read_root.ts` (inside the root, outside the control plane and the key
 * dir, links followed only where they stay inside); a refusal is a tool error with its code. It
 * writes nothing anywhere: the only file calls it makes are `realPath`, `lstat`, `readDir` and a
 * read-only open.
 *
 * Bounds, so an agent's call cannot hold the process: a file read is at most
 * {@link MAX_READ_BYTES} (256 KiB); a listing at most {@link MAX_LIST} entries; `find` and
 * `grep` walk at most {@link MAX_WALK} entries, never following a link, skipping the control
 * plane; `grep` reads only regular UTF-8 files up to the read cap, at most {@link MAX_GREP_BYTES}
 * in all, and returns at most {@link MAX_MATCHES} lines, each cut to {@link MAX_LINE_CHARS}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readfsTools } from "./readfs.ts";
 * import { openRoot } from "./read_root.ts";
 * const tools = readfsTools(openRoot(Deno.cwd(), null));
 * assert.deepEqual(tools.map((t) => t.name), ["read_file", "list_dir", "find", "grep", "stat"]);
 * ```
 * @module
 */
import { sha256Hex } from "../crypto/hash.ts";
import { McpError } from "../errors.ts";
import { kindOfInfo } from "../fs/entry.ts";
import { join } from "../fs/path.ts";
import { readRegularFileWithin } from "../fs/safe_read.ts";
import { fnmatchCase } from "../pycompat/fnmatch.ts";
import { DEFAULT_SIZE_CAP } from "../policy/types.ts";
import { readHeld, type ReadRoot, reservedProblem, type Resolved, resolveIn } from "./read_root.ts";
import type { ArgSpec, Tool, ToolResult } from "./server.ts";

/** The largest file `read_file` returns (and `grep` searches): the proposal size cap, 256 KiB. */
export const MAX_READ_BYTES = DEFAULT_SIZE_CAP;
/** The most entries `list_dir` returns. */
export const MAX_LIST = 5000;
/** The most entries a `find` or `grep` walk visits. */
export const MAX_WALK = 50_000;
/** The most paths `find` returns. */
export const MAX_FOUND = 1000;
/** The most lines `grep` returns. */
export const MAX_MATCHES = 500;
/** The most bytes `grep` reads in one call. */
export const MAX_GREP_BYTES = 64 * 1024 * 1024;
/** The longest matching line `grep` returns, in characters. */
export const MAX_LINE_CHARS = 500;
/** The longest path argument taken, in characters (longer is refused before any file call). */
export const MAX_ARG_CHARS = 4096;

const PATH_ARG: ArgSpec = {
  type: "string",
  description: "a path relative to the root (default: the root itself, `.`)",
  max: MAX_ARG_CHARS,
};

function text(t: string, data: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text: t }], structuredContent: data };
}

function pathArg(args: Readonly<Record<string, unknown>>, name = "path"): string {
  const v = args[name];
  return typeof v === "string" ? v : ".";
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The file's text, or `null` when it is not UTF-8 or holds a NUL (a binary). */
function textOf(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** Reads a resolved regular file under the cap, or refuses (never through a swapped folder). */
function readResolved(root: ReadRoot, r: Resolved): Promise<Uint8Array> {
  return readHeld(
    root,
    r,
    async (abs) =>
      (await readRegularFileWithin(abs, { maxBytes: MAX_READ_BYTES, what: "file" })).bytes,
  );
}

function dirOf(r: Resolved): void {
  const st = Deno.lstatSync(r.abs);
  if (!st.isDirectory) {
    throw new McpError("NOT_DIRECTORY", `${r.named} is a ${kindOfInfo(st)}, not a directory`);
  }
}

/** One entry met by {@link walk}. */
interface Met {
  readonly rel: string;
  readonly abs: string;
  readonly name: string;
  readonly kind: "dir" | "file" | "symlink" | "other";
}

/**
 * The entries below `start` (itself when a file), depth first in name order, never through a
 * link (each folder is listed only while its path holds still: {@link readHeld}), without the
 * control plane or the key dir; stops after `budget.left` entries.
 */
async function* walk(
  root: ReadRoot,
  start: Resolved,
  budget: { left: number },
): AsyncGenerator<Met> {
  const st = Deno.lstatSync(start.abs);
  if (!st.isDirectory) {
    const name = start.rel.split("/").at(-1) ?? start.rel;
    yield { rel: start.rel, abs: start.abs, name, kind: kindOfInfo(st) };
    return;
  }
  const stack: { rel: string; abs: string }[] = [{ rel: start.rel, abs: start.abs }];
  while (stack.length > 0) {
    const dir = stack.pop() as { rel: string; abs: string };
    let entries: Deno.DirEntry[];
    try {
      const at = { abs: dir.abs, rel: dir.rel, named: dir.rel };
      entries = await readHeld(root, at, (abs) => [...Deno.readDirSync(abs)]);
    } catch {
      continue; // unreadable, gone since, or on a path that did not hold still: skipped
    }
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    const below: { rel: string; abs: string }[] = [];
    for (const e of entries) {
      if (budget.left <= 0) return;
      budget.left--;
      const rel = dir.rel === "." ? e.name : `${dir.rel}/${e.name}`;
      const abs = join(dir.abs, e.name);
      if (reservedProblem(root, rel, abs) !== null) continue;
      const kind = kindOfInfo(e);
      yield { rel, abs, name: e.name, kind };
      if (kind === "dir") below.push({ rel, abs });
    }
    for (let i = below.length - 1; i >= 0; i--) stack.push(below[i]);
  }
}

/** Whether a name or path matches a `find` pattern (with a `/`: the whole relative path). */
function globMatch(m: Met, pattern: string): boolean {
  return pattern.includes("/") ? fnmatchCase(m.rel, pattern) : fnmatchCase(m.name, pattern);
}

/**
 * The readfs server's tools over one root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readfsTools } from "./readfs.ts";
 * import { openRoot } from "./read_root.ts";
 * const [readFile] = readfsTools(openRoot("/etc", null));
 * const sha = (await readFile.call({ path: "hostname" })).structuredContent?.sha256;
 * assert.match(String(sha), /^[0-9a-f]{64}$/);
 * ```
 */
export function readfsTools(root: ReadRoot): Tool[] {
  return [
    {
      name: "read_file",
      description: "Read a text file below the root (at most 256 KiB). Returns its text and its " +
        "sha256, the base_sha256 a change proposal for it needs. A binary file returns only its " +
        "size and sha256.",
      args: {
        path: { ...PATH_ARG, required: true, description: "the file, relative to the root" },
      },
      readOnly: true,
      call: async (args) => {
        const r = resolveIn(root, pathArg(args));
        const bytes = await readResolved(root, r);
        const sha256 = sha256Hex(bytes);
        const body = textOf(bytes);
        const head = `path: ${r.rel}\nsize: ${bytes.length}\nsha256: ${sha256}` +
          (body === null ? "\nbinary: true (not UTF-8 text; its content is not shown)" : "");
        const data = { path: r.rel, size: bytes.length, sha256, binary: body === null };
        const result: ToolResult = {
          content: body === null
            ? [{ type: "text", text: head }]
            : [{ type: "text", text: head }, { type: "text", text: body }],
          // The text travels once, in its block; the data says where it is and its hash.
          structuredContent: data,
        };
        return result;
      },
    },
    {
      name: "list_dir",
      description: "List a directory below the root: each entry's name and kind (file, dir, " +
        "symlink, other). The control plane (.git, .agentteams, .claude, …) is left out.",
      args: { path: PATH_ARG },
      readOnly: true,
      call: async (args) => {
        const r = resolveIn(root, pathArg(args));
        dirOf(r);
        const entries: { name: string; kind: string }[] = [];
        let truncated = false;
        const all = (await readHeld(root, r, (abs) => [...Deno.readDirSync(abs)])).sort((a, b) =>
          a.name < b.name ? -1 : a.name > b.name ? 1 : 0
        );
        for (const e of all) {
          const rel = r.rel === "." ? e.name : `${r.rel}/${e.name}`;
          if (reservedProblem(root, rel, join(r.abs, e.name)) !== null) continue;
          if (entries.length >= MAX_LIST) {
            truncated = true;
            break;
          }
          entries.push({ name: e.name, kind: kindOfInfo(e) });
        }
        const lines = entries.map((e) => `${e.kind}\t${e.name}`);
        if (truncated) lines.push(`(stopped at ${MAX_LIST} entries)`);
        return text(lines.join("\n") || "(empty)", { path: r.rel, entries, truncated });
      },
    },
    {
      name: "find",
      description: "Find files and directories below a path by a glob (fnmatch: * ? [..]). A " +
        "pattern without / matches names; with /, the path relative to the root. Links are " +
        "not followed; the control plane is skipped.",
      args: {
        pattern: {
          type: "string",
          description: "the glob, e.g. *.ts or src/*/index.ts",
          required: true,
          max: 1024,
        },
        path: { ...PATH_ARG, description: "where to look (default: the root)" },
      },
      readOnly: true,
      call: async (args) => {
        const r = resolveIn(root, pathArg(args));
        const pattern = args.pattern as string;
        const budget = { left: MAX_WALK };
        const found: string[] = [];
        let truncated = false;
        for await (const m of walk(root, r, budget)) {
          if (!globMatch(m, pattern)) continue;
          if (found.length >= MAX_FOUND) {
            truncated = true;
            break;
          }
          found.push(m.kind === "dir" ? `${m.rel}/` : m.rel);
        }
        if (budget.left <= 0) truncated = true;
        const lines = [...found];
        if (truncated) lines.push(`(stopped: at most ${MAX_FOUND} results, ${MAX_WALK} entries)`);
        return text(lines.join("\n") || "(no match)", { paths: found, truncated });
      },
    },
    {
      name: "grep",
      description: "Search text files below a path for a fixed string (not a regex). Returns " +
        "path:line: text for each matching line. Skips binaries, files over 256 KiB, links and " +
        "the control plane.",
      args: {
        pattern: { type: "string", description: "the text to find", required: true, max: 1024 },
        path: { ...PATH_ARG, description: "a file or directory (default: the root)" },
        glob: { type: "string", description: "only files whose name matches this glob", max: 1024 },
        ignore_case: { type: "boolean", description: "match regardless of letter case" },
      },
      readOnly: true,
      call: async (args) => {
        const r = resolveIn(root, pathArg(args));
        const fold = args.ignore_case === true;
        const needle = fold ? (args.pattern as string).toLowerCase() : args.pattern as string;
        if (needle === "") throw new McpError("PATH_INVALID", "grep needs a non-empty pattern");
        const glob = typeof args.glob === "string" ? args.glob : null;
        const budget = { left: MAX_WALK };
        const matches: { path: string; line: number; text: string }[] = [];
        let bytes = 0;
        let skipped = 0;
        let truncated = false;
        outer: for await (const m of walk(root, r, budget)) {
          if (m.kind !== "file") continue;
          if (glob !== null && !globMatch(m, glob)) continue;
          if (bytes >= MAX_GREP_BYTES) {
            truncated = true;
            break;
          }
          let body: string | null;
          try {
            // A folder on the way swapped for a link while the file was read: not this file.
            const read = await readResolved(root, { abs: m.abs, rel: m.rel, named: m.rel });
            bytes += read.length;
            body = textOf(read);
          } catch {
            body = null;
          }
          if (body === null) {
            skipped++;
            continue;
          }
          const lines = body.split("\n");
          for (let i = 0; i < lines.length; i++) {
            const line = lines[i];
            if (!(fold ? line.toLowerCase() : line).includes(needle)) continue;
            if (matches.length >= MAX_MATCHES) {
              truncated = true;
              break outer;
            }
            matches.push({ path: m.rel, line: i + 1, text: line.slice(0, MAX_LINE_CHARS) });
          }
        }
        if (budget.left <= 0) truncated = true;
        const out = matches.map((x) => `${x.path}:${x.line}: ${x.text}`);
        if (truncated) out.push(`(stopped: at most ${MAX_MATCHES} lines, ${MAX_WALK} entries)`);
        return text(out.join("\n") || "(no match)", { matches, skipped, truncated });
      },
    },
    {
      name: "stat",
      description: "Describe a path below the root: kind, size, mode, modification time, and " +
        "whether the name is a link (followed only when it stays inside the root).",
      args: { path: PATH_ARG },
      readOnly: true,
      call: async (args) => {
        const r = resolveIn(root, pathArg(args));
        const st = await readHeld(root, r, (abs) => Deno.lstatSync(abs));
        let link = false;
        try {
          link = r.named !== "." && Deno.lstatSync(join(root.real, r.named)).isSymlink;
        } catch {
          link = false;
        }
        const data = {
          path: r.rel,
          kind: kindOfInfo(st),
          size: st.size,
          mode: st.mode === null ? null : (st.mode & 0o7777).toString(8).padStart(4, "0"),
          mtime: st.mtime?.toISOString() ?? null,
          link,
        };
        const lines = Object.entries(data).map(([k, v]) => `${k}: ${v}`);
        return text(lines.join("\n"), data);
      },
    },
  ];
}
