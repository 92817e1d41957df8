/** Command output bound for a terminal: control characters shown, not obeyed. */
import assert from "node:assert/strict";
import { inert } from "../../lib/cli/terminal.ts";

Deno.test("inert: escape sequences, other C0 and C1 controls and DEL are shown as \\xNN; text, tab, newline and CR pass", () => {
  assert.equal(inert("plain text, ünïcode ✓\n\ttab\r\n"), "plain text, ünïcode ✓\n\ttab\r\n");
  assert.equal(inert("\x1b[2J\x1b]0;title\x07"), "\\x1b[2J\\x1b]0;title\\x07");
  assert.equal(inert("a\x00b\x7fc\u009b31m\u0085"), "a\\x00b\\x7fc\\x9b31m\\x85");
  // Every code point below U+00A0 but tab, LF and CR is changed; none above it is.
  for (let c = 0; c < 0x200; c++) {
    const ch = String.fromCharCode(c);
    const kept = c === 9 || c === 10 || c === 13 || (c >= 0x20 && c < 0x7f) || c >= 0xa0;
    assert.equal(inert(ch) === ch, kept, `U+${c.toString(16)}`);
  }
});
