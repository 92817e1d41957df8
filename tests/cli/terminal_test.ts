/** Command output bound for a terminal: control characters shown, not obeyed. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { inert, oneLine } from "../../lib/cli/terminal.ts";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { appendRow } from "../../lib/ledger/append.ts";
import { runCli, sandbox } from "../_helpers/mod.ts";

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

Deno.test("oneLine: controls (tab, newline, CR included), C1, line separators and bidi formatting are written out; other text passes", () => {
  assert.equal(oneLine("plain ünïcode ✓ שלום"), "plain ünïcode ✓ שלום");
  assert.equal(oneLine("a\nb\tc\r"), "a\\x0ab\\x09c\\x0d");
  assert.equal(oneLine("\x1b[2J\u009b31m"), "\\x1b[2J\\x9b31m");
  assert.equal(oneLine("txt\u202eexe.\u2028\u2066"), "txt\\u{202e}exe.\\u{2028}\\u{2066}");
  // A literal backslash is doubled, so text that spells an escape cannot pass for one.
  assert.equal(oneLine("a\\x0ab"), "a\\\\x0ab");
  assert.notEqual(oneLine("a\\x0ab"), oneLine("a\nb"));
  assert.equal(oneLine("\u061c\u200b\u2060\ufeff"), "\\u{61c}\\u{200b}\\u{2060}\\u{feff}");
  // The joiners some scripts need inside words pass.
  assert.equal(oneLine("\u200c\u200d"), "\u200c\u200d");
});

Deno.test("CLI: a refusal quoting agent text and `ledger show` of a row with a forged-looking rationale print one line each, with no escape sequence", async () => {
  const sb = await sandbox("terminal");
  try {
    const env = { ...sb.env };
    assert.equal((await runCli(["keys", "init"], { env })).code, 0);
    const key = loadLedgerKey({ env, mode: "direct" });
    await appendRow(sb.project, key.hmac, {
      action: "apply-proposal-refused",
      agent: "worker",
      reason:
        "gate said \x1b]0;owned\x07\n9\t2026-01-01T00:00:00+00:00\tapply-proposal\tworker\tforged",
    });
    const show = await runCli(["ledger", "show", "--project", sb.project], { env });
    assert.equal(show.code, 0, show.stderr);
    assert.equal(show.stdout.trim().split("\n").length, 1, show.stdout);
    assert.ok(!show.stdout.includes("\x1b") && !show.stdout.includes("\x07"), show.stdout);
    assert.match(show.stdout, /gate said \\x1b\]0;owned\\x07\\x0a9\\x09/);
    // A refusal message carrying an operator-given (or agent-made) name with the same bytes.
    const bad = join(sb.dir, "cp\x1b[2J\nagentteams ledger verify: ok");
    const r = await runCli(["ledger", "verify", "--checkpoint", bad, "--project", sb.project], {
      env,
    });
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split("\n").filter((l) => l.includes("refused"));
    assert.equal(lines.length, 1, r.stderr);
    assert.ok(!r.stderr.includes("\x1b"), r.stderr);
    assert.ok(!/^agentteams ledger verify: ok/m.test(r.stderr), r.stderr);
  } finally {
    await sb.dispose();
  }
});
