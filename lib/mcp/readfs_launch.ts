/**
 * What counts as launching the read-only filesystem server, for the audit (a Goose recipe's
 * `agentteams_readfs` extension, `lib/audit/check_goose.ts`) and for the server itself: its tool
 * names, and the launch lines accepted. Pure; no file is read.
 *
 * Two lines are accepted (`type: stdio` in each):
 * - this tool's installed launcher: `agentteams mcp readfs --root .` (the `agentteams` on PATH);
 * - the line `agentteams permissions mcp readfs --root .` prints: an absolute `deno`, `run`,
 *   `--no-prompt`, one `--allow-read=` list, at most `--allow-env=` of `HOME` and
 *   `AGENTTEAMS_KEY_DIR`, an absolute entry (`…/main.ts` or `…/main.js`), then
 *   `mcp readfs --project P --root .`. No other flag: no write, run, net, ffi, sys or import
 *   grant, no `-A`. Every path the line lets it read lies in the project `P` or in the entry's
 *   own folder, so even an entry that is not this tool's could read nothing else.
 *
 * @example
 * ```ts
 * import { readfsLaunchProblem } from "./readfs_launch.ts";
 * import assert from "node:assert/strict";
 * assert.equal(readfsLaunchProblem("agentteams", ["mcp", "readfs", "--root", "."]), null);
 * assert.notEqual(readfsLaunchProblem("sh", ["-c", "agentteams mcp readfs"]), null);
 * ```
 * @module
 */
import { basename, dirname, isAbsolute, normalize } from "../fs/path.ts";
import { within } from "../fs/within.ts";

/** The tools the readfs server has (the names the audit accepts in `available_tools`). */
export const READFS_TOOLS: readonly string[] = Object.freeze([
  "read_file",
  "list_dir",
  "find",
  "grep",
  "stat",
]);

/** This tool's installed launcher running its readfs server. */
export const READFS_LAUNCH = Object.freeze({
  cmd: "agentteams",
  args: Object.freeze(["mcp", "readfs", "--root", "."]),
});

/** The environment names the printed line may grant. */
const LINE_ENV: ReadonlySet<string> = new Set(["HOME", "AGENTTEAMS_KEY_DIR"]);

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function plainAbsolute(p: string): boolean {
  return isAbsolute(p) && normalize(p) === p && !p.includes("\0");
}

/** Why a `deno run …` line is not the printed readfs line, or `null`. */
function printedLineProblem(cmd: string, args: readonly string[]): string | null {
  if (!plainAbsolute(cmd) || basename(cmd) !== "deno") return "its cmd is not an absolute deno";
  if (args[0] !== "run") return "it is not `deno run`";
  let i = 1;
  let read: string[] | null = null;
  for (; i < args.length && args[i].startsWith("-"); i++) {
    const a = args[i];
    if (a === "--no-prompt") continue;
    if (a.startsWith("--allow-read=") && read === null) {
      read = a.slice("--allow-read=".length).split(",");
      continue;
    }
    if (a.startsWith("--allow-env=")) {
      const names = a.slice("--allow-env=".length).split(",");
      if (names.every((n) => LINE_ENV.has(n))) continue;
      return `it grants environment variables beyond ${[...LINE_ENV].join(", ")}`;
    }
    return `it passes ${a.split("=")[0]}, which the printed line never has (it grants no write, ` +
      "run, net, ffi or sys)";
  }
  if (!args.includes("--no-prompt")) return "it lacks --no-prompt";
  if (read === null) return "it has no --allow-read list";
  const entry = args[i];
  if (entry === undefined || !plainAbsolute(entry) || !/\/main\.(ts|js)$/.test(entry)) {
    return "its entry is not an absolute main.ts or main.js";
  }
  const rest = args.slice(i + 1);
  if (
    rest.length !== 6 || !same([rest[0], rest[1], rest[2], rest[4], rest[5]], [
      "mcp",
      "readfs",
      "--project",
      "--root",
      ".",
    ])
  ) {
    return "it does not end `mcp readfs --project DIR --root .`";
  }
  const project = rest[3];
  if (!plainAbsolute(project)) return "its --project is not an absolute, normalized path";
  const code = dirname(entry);
  const outside = read.filter((r) => !plainAbsolute(r) || !(within(r, project) || within(r, code)));
  if (outside.length > 0) {
    return `it may read ${outside.join(", ")}, outside the project and the program's folder`;
  }
  return null;
}

/**
 * Why `cmd` and `args` do not launch the readfs server (see the module doc), or `null`.
 *
 * @example
 * ```ts
 * import { readfsLaunchProblem } from "./readfs_launch.ts";
 * import assert from "node:assert/strict";
 * const line = ["run", "--no-prompt", "--allow-read=/p,/opt/at/lib", "--allow-env=AGENTTEAMS_KEY_DIR,HOME",
 *   "/opt/at/main.ts", "mcp", "readfs", "--project", "/p", "--root", "."];
 * assert.equal(readfsLaunchProblem("/usr/bin/deno", line), null);
 * assert.match(readfsLaunchProblem("/usr/bin/deno", ["run", "-A", ...line.slice(1)]) ?? "", /-A/);
 * ```
 */
export function readfsLaunchProblem(
  cmd: string | null,
  args: readonly string[] | null,
): string | null {
  if (cmd === null || args === null) return "it has no cmd or no args list";
  if (cmd === READFS_LAUNCH.cmd && same(args, READFS_LAUNCH.args)) return null;
  if (basename(cmd) === "deno") return printedLineProblem(cmd, args);
  return `it launches ${cmd}, not the readfs server (agentteams ${READFS_LAUNCH.args.join(" ")}, ` +
    "or the line agentteams permissions mcp readfs --root . prints)";
}
