/**
 * Text bound for the operator's terminal from a command the agent chose: its control characters
 * (escape sequences that move the cursor, rewrite the screen or set the window title) are shown,
 * not obeyed.
 *
 * @example
 * ```ts
 * import { inert } from "./terminal.ts";
 * inert("ok\x1b[2J\n"); // "ok\\x1b[2J\n"
 * ```
 * @module
 */

/** C0 controls except tab, newline and carriage return; DEL; the C1 controls (U+0080..U+009F). */
function isControl(c: number): boolean {
  return (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0x7f && c < 0xa0);
}

/**
 * `text` with each control character but tab, newline and carriage return written as `\xNN`.
 *
 * @example
 * ```ts
 * import { inert } from "./terminal.ts";
 * inert("a\tb\u009b31m"); // "a\tb\\x9b31m"
 * ```
 */
export function inert(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out += isControl(c) ? `\\x${c.toString(16).padStart(2, "0")}` : text[i];
  }
  return out;
}
