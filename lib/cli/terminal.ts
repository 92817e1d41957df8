/**
 * Text bound for the operator's terminal from a command the agent chose: its control characters
 * (escape sequences that move the cursor, rewrite the screen or set the window title) are shown,
 * not obeyed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inert } from "./terminal.ts";
 * assert.equal(inert("ok\x1b[2J\n"), "ok\\x1b[2J\n");
 * ```
 * @module
 */
import { isControlOrFormat } from "../text/chars.ts";

/** C0 controls except tab, newline and carriage return; DEL; the C1 controls (U+0080..U+009F). */
function isControl(c: number): boolean {
  return (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0x7f && c < 0xa0);
}

/**
 * `text` with each control character but tab, newline and carriage return written as `\xNN`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inert } from "./terminal.ts";
 * assert.equal(inert("a\tb\u009b31m"), "a\tb\\x9b31m");
 * ```
 */
export function inert(text: string): string {
  return escapeWhere(text, isControl);
}

/** `text` with each code unit `shown` selects written as `\\xNN` (or `\\u{NNNN}`). */
function escapeWhere(text: string, shown: (c: number) => boolean): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!shown(c)) out += text[i];
    else if (c < 0x100) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else out += `\\u{${c.toString(16)}}`;
  }
  return out;
}

/**
 * `text` as one line that shows exactly what it holds: every control character (tab, newline and
 * carriage return included), the C1 controls, the line separators and the bidirectional formatting
 * characters written as `\xNN` or `\u{NNNN}`, and a backslash as `\\` (so a literal `\x0a`
 * cannot pass for an escaped newline). For our own messages and records that carry
 * agent-chosen text (a refusal quoting a gate's output, a ledger row's rationale, a path): they can
 * neither move the cursor nor pass for another line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { oneLine } from "./terminal.ts";
 * assert.equal(oneLine("a\nb\u202e"), "a\\x0ab\\u{202e}");
 * ```
 */
export function oneLine(text: string): string {
  return escapeWhere(text.replaceAll("\\", "\\\\"), isControlOrFormat);
}

/**
 * Agent-chosen text of many lines (a staged proposal's content) as the operator must review it:
 * lines stay lines and tabs stay tabs, but every other control character (a carriage return, an
 * escape sequence), the C1 controls, the line separators and the bidirectional formatting
 * characters are written as `\xNN` or `\u{NNNN}`, so the text can neither rewrite what was shown
 * before it nor show other text than it holds. Backslashes are left as they are (code is full of
 * them): a literal `\x1b` reads the same as an escaped one, and both are shown, not obeyed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shownText } from "./terminal.ts";
 * assert.equal(shownText("a\tb\nevil\r\x1b[2Jok\u202e"), "a\tb\nevil\\x0d\\x1b[2Jok\\u{202e}");
 * ```
 */
export function shownText(text: string): string {
  return escapeWhere(text, (c) => c !== 0x09 && c !== 0x0a && isControlOrFormat(c));
}

export { PROGRESS_ENV } from "../env.ts";

/** Least time between two draws of the progress line. */
export const PROGRESS_INTERVAL_MS = 100;

/** Clears the line the cursor is on: back to its start, erase to its end. */
export const CLEAR_LINE = "\r\x1b[K";

/**
 * Whether a command shows a progress line: only on a terminal (stderr), never with `--json`,
 * never in CI (`CI` set to anything but empty, `0` or `false`), never on a `TERM=dumb`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { progressWanted } from "./terminal.ts";
 * assert.equal(progressWanted({ json: false, terminal: true, env: {} }), true);
 * assert.equal(progressWanted({ json: false, terminal: true, env: { CI: "true" } }), false);
 * ```
 */
export function progressWanted(
  o: { json: boolean; terminal: boolean; env: Readonly<Record<string, string | undefined>> },
): boolean {
  if (o.json || !o.terminal) return false;
  const ci = (o.env.CI ?? "").trim().toLowerCase();
  if (ci !== "" && ci !== "0" && ci !== "false") return false;
  return o.env.TERM !== "dumb";
}

/**
 * One progress line's text: the label, the count and the rate per second.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { progressText } from "./terminal.ts";
 * assert.equal(progressText("ledger verify", 25000, "rows", 500), "ledger verify: 25,000 rows (50,000/s)");
 * ```
 */
export function progressText(label: string, count: number, unit: string, ms: number): string {
  const n = (x: number) => Math.round(x).toLocaleString("en-US");
  const rate = ms > 0 ? ` (${n((count * 1000) / ms)}/s)` : "";
  return `${label}: ${n(count)} ${unit}${rate}`;
}

/** A progress line: `tick` with the count so far, `done` at the end (it clears the line). */
export interface Progress {
  /** The count so far; drawn when at least {@link PROGRESS_INTERVAL_MS} passed since the last. */
  tick(count: number): void;
  /** Clears the line, if one was drawn; later ticks draw nothing. */
  done(): void;
}

/** A progress line that draws nothing. */
export const NO_PROGRESS: Progress = Object.freeze({ tick: () => {}, done: () => {} });

/**
 * A progress line on `write` (the terminal's stderr): the first tick is drawn at once, later ones
 * at most every {@link PROGRESS_INTERVAL_MS}, each over the last (`\r`, erase the line); `done`
 * clears it, so the command's own output starts on a clean line. With `enabled` false (see
 * {@link progressWanted}) nothing is ever written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { progressLine } from "./terminal.ts";
 * const out: string[] = [];
 * let clock = 0;
 * const now = () => (clock += 500); // half a second passes at each look
 * const p = progressLine({ label: "audit", unit: "files", enabled: true, write: (t) => out.push(t), now });
 * p.tick(1);
 * p.done();
 * // The first tick draws at once, with the rate so far; done clears the line.
 * assert.deepEqual(out, ["\r\x1b[Kaudit: 1 files (2/s)", "\r\x1b[K"]);
 * ```
 */
export function progressLine(o: {
  readonly label: string;
  readonly unit: string;
  readonly enabled: boolean;
  readonly write: (text: string) => void;
  readonly now?: () => number;
}): Progress {
  if (!o.enabled) return NO_PROGRESS;
  const now = o.now ?? (() => performance.now());
  const start = now();
  let last: number | null = null;
  let over = false;
  return {
    tick(count) {
      if (over) return;
      const t = now();
      if (last !== null && t - last < PROGRESS_INTERVAL_MS) return;
      last = t;
      o.write(CLEAR_LINE + oneLine(progressText(o.label, count, o.unit, t - start)));
    },
    done() {
      if (over) return;
      over = true;
      if (last !== null) o.write(CLEAR_LINE);
    },
  };
}

/**
 * The progress line of a command run by a person: on stderr when {@link progressWanted} says
 * so (stderr a terminal, no `--json`, not CI), else one that draws nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stderrProgress } from "./terminal.ts";
 * import { NO_PROGRESS } from "./terminal.ts";
 * // With --json it draws nothing: the line that never writes.
 * assert.equal(stderrProgress("audit", "files", { json: true, env: {} }), NO_PROGRESS);
 * ```
 */
export function stderrProgress(
  label: string,
  unit: string,
  ctx: { readonly json: boolean; readonly env: Readonly<Record<string, string | undefined>> },
): Progress {
  const enc = new TextEncoder();
  return progressLine({
    label,
    unit,
    enabled: progressWanted({ json: ctx.json, terminal: Deno.stderr.isTerminal(), env: ctx.env }),
    write: (text) => {
      try {
        Deno.stderr.writeSync(enc.encode(text));
      } catch {
        // A closed terminal: the progress line is not worth failing the command for.
      }
    },
  });
}
