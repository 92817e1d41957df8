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
