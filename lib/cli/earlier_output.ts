/**
 * The earlier tool's output, for the earlier tool's flag spellings: a script that parses what
 * `--issue-dispatch`, `--apply-proposal`, `--run-request` or `--verify-proposal-ledger` printed
 * keeps working. The new spellings keep their own output (main.ts).
 *
 * - `--issue-dispatch`: the bare nonce on stdout.
 * - `--apply-proposal`: the result object `{agent, path, base_sha256, new_sha256, gates, written}`
 *   as indented JSON (two spaces, ASCII-escaped, as Python's `json.dumps(result, indent=2)`).
 * - `--run-request`: the result object without its streams, `{agent, argv, exit, duration_ms,
 *   truncated, undeclared_writes, ran}`, the same way.
 * - `--verify-proposal-ledger`: `Proposal ledger: OK` on stdout, or `Proposal ledger: N problem(s)`
 *   and one `  ✗ problem` line each on stderr.
 * - A refusal: `[apply-proposal] refused: CODE: reason` (the earlier command's name in brackets) on
 *   stderr; the exit codes are the contract's, as for the new spellings.
 *
 * @module
 */
import { COMMAND_ALIASES } from "./args.ts";
import { problemLine } from "../ledger/problem_line.ts";
import { oneLine } from "./terminal.ts";
import type { Outcome } from "./command_spec.ts";

/** What the earlier tool printed for one outcome. */
export interface EarlierText {
  /** Lines for stdout. */
  readonly stdout: readonly string[];
  /** Lines for stderr. */
  readonly stderr: readonly string[];
}

/** The result keys the earlier tool printed, in its order (FORMATS.md, the runner's results). */
const APPLY_KEYS = ["agent", "path", "base_sha256", "new_sha256", "gates", "written"];
const RUN_KEYS = ["agent", "argv", "exit", "duration_ms", "truncated", "undeclared_writes", "ran"];

/**
 * Python's `json.dumps(v, indent=2)`: two-space indent, `": "` after a key, every character past
 * `~` escaped as `\uXXXX`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { indentedAsciiJson } from "./earlier_output.ts";
 * assert.equal(indentedAsciiJson({ a: "é", b: [] }), '{\n  "a": "\\u00e9",\n  "b": []\n}');
 * ```
 */
export function indentedAsciiJson(v: unknown): string {
  return JSON.stringify(v, null, 2).replace(
    /[\u007f-\uffff]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}

function pick(o: Readonly<Record<string, unknown>> | undefined, keys: readonly string[]) {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o !== undefined && Object.hasOwn(o, k)) out[k] = o[k];
  return out;
}

/** The earlier command's name, as its refusals named it: `--apply-proposal` → `apply-proposal`. */
function earlierName(flag: string): string {
  return flag.replace(/^--/, "");
}

/**
 * The earlier tool's command flag argv was spelled with (`--issue-dispatch`, any of
 * `COMMAND_ALIASES`), whatever its output; `null` for the new spellings, and for a flag after
 * `--` (an argument of the command's own).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { earlierSpelling } from "./earlier_output.ts";
 * assert.equal(earlierSpelling(["--issue-dispatch", "--agent", "w"]), "--issue-dispatch");
 * assert.equal(earlierSpelling(["dispatch", "--agent", "w"]), null);
 * ```
 */
export function earlierSpelling(argv: readonly string[]): string | null {
  for (const a of argv) {
    if (a === "--") return null;
    const name = a.includes("=") ? a.slice(0, a.indexOf("=")) : a;
    if (Object.hasOwn(COMMAND_ALIASES, name)) return name;
  }
  return null;
}

/**
 * The earlier command flag argv was spelled with, when its output is the earlier tool's: one of
 * the flags this module renders, else `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { earlierOutputFlag } from "./earlier_output.ts";
 * assert.equal(earlierOutputFlag(["--apply-proposal", "p.json"]), "--apply-proposal");
 * assert.equal(earlierOutputFlag(["apply", "p.json"]), null);
 * assert.equal(earlierOutputFlag(["run", "--", "--issue-dispatch"]), null);
 * ```
 */
export function earlierOutputFlag(argv: readonly string[]): string | null {
  for (const a of argv) {
    if (a === "--") return null;
    const name = a.includes("=") ? a.slice(0, a.indexOf("=")) : a;
    if (Object.hasOwn(RENDERERS, name) && Object.hasOwn(COMMAND_ALIASES, name)) return name;
  }
  return null;
}

type Render = (o: Outcome) => EarlierText;

const RENDERERS: Readonly<Record<string, Render>> = {
  "--issue-dispatch": (o) => ({ stdout: [String(o.json?.nonce ?? o.text ?? "")], stderr: [] }),
  "--apply-proposal": (o) => ({
    stdout: [indentedAsciiJson(pick(o.json, APPLY_KEYS))],
    stderr: [],
  }),
  "--run-request": (o) => ({ stdout: [indentedAsciiJson(pick(o.json, RUN_KEYS))], stderr: [] }),
  "--verify-proposal-ledger": (o) => {
    const problems = (o.json?.problems ?? []) as {
      row: number | null;
      code: string;
      message: string;
    }[];
    if (o.exit === 0 && problems.length === 0) {
      return { stdout: ["Proposal ledger: OK"], stderr: [] };
    }
    return {
      stdout: [],
      stderr: [
        `Proposal ledger: ${problems.length} problem(s)`,
        ...problems.map((p) => `  \u2717 ${oneLine(problemLine(p))}`),
      ],
    };
  },
};

/**
 * What the earlier tool printed for an outcome of `flag` (one `earlierOutputFlag` returned). A
 * command that ran but failed its checks afterwards (exit 3) prints its result, then its reason.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { earlierOutcome } from "./earlier_output.ts";
 * assert.deepEqual(
 *   earlierOutcome("--issue-dispatch", { exit: 0, json: { ok: true, nonce: "ab12" } }).stdout,
 *   ["ab12"],
 * );
 * ```
 */
export function earlierOutcome(flag: string, o: Outcome): EarlierText {
  const text = RENDERERS[flag](o);
  if (o.refusal === undefined || flag === "--verify-proposal-ledger") return text;
  return {
    stdout: text.stdout,
    stderr: [...text.stderr, earlierRefusal(flag, o.refusal.code, o.refusal.message)],
  };
}

/**
 * The earlier tool's refusal line: `[apply-proposal] refused: CODE: reason`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { earlierRefusal } from "./earlier_output.ts";
 * assert.equal(
 *   earlierRefusal("--run-request", "ARGV_NOT_ALLOWED", "no entry"),
 *   "[run-request] refused: ARGV_NOT_ALLOWED: no entry",
 * );
 * ```
 */
export function earlierRefusal(flag: string, code: string, message: string): string {
  return `[${earlierName(flag)}] refused: ${code}: ${oneLine(message)}`;
}
