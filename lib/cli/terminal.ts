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
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u0080-\u009f]/g;

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
  return text.replace(
    CONTROL,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}
