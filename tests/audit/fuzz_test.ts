/**
 * The readers and --fix never crash: random bytes, and mutations of real-looking files (the
 * corpus), through every file kind's checks give a clean parse or findings with a known code and
 * a place, never an exception; a fix of a mutated file is idempotent.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { RULES } from "../../lib/audit/finding.ts";
import { fixText } from "../../lib/audit/fix.ts";
import { checkFile, type FileKind } from "../../lib/audit/team.ts";
import { corpus, corpusText } from "./_corpus.ts";

const KINDS: FileKind[] = ["claude", "copilot", "goose", "codex-agent", "codex-config"];
const FILES = Object.keys(corpus());
const TEXTS = FILES.map((f) => corpusText(f));

/** Pieces that matter to YAML, TOML and front matter. */
const PIECES = [
  "---\n",
  "...\n",
  "\n",
  "\r\n",
  "\t",
  "  ",
  ": ",
  "? ",
  "- ",
  "&a ",
  "*a",
  "!!str ",
  "<<: ",
  '"',
  "'",
  "\\x73",
  "[",
  "]",
  "{",
  "}",
  "#",
  "|",
  ">",
  "{{",
  "{%",
  '"""',
  "'''",
  "=",
  "tools:",
  "extensions:",
  "sandbox_mode = ",
  "\uFEFF",
  "\u0000",
  "\uD800",
];

function assertSpots(kind: FileKind, text: string, exempt: boolean): void {
  const spots = checkFile(kind, `x/${kind}.any`, text, exempt);
  for (const s of spots) {
    assert.ok(Object.hasOwn(RULES, s.code), s.code);
    assert.ok(Number.isInteger(s.line) && s.line >= 1, `${s.code} line ${s.line}`);
    assert.ok(Number.isInteger(s.column) && s.column >= 1, `${s.code} column ${s.column}`);
  }
}

function assertFixIdempotent(kind: FileKind, text: string, exempt: boolean): void {
  const r = fixText(kind, "x", text, exempt);
  if (r.outcome !== "fixed") return;
  const again = fixText(kind, "x", r.text, exempt);
  assert.equal(again.outcome, "unchanged", `second fix: ${JSON.stringify(again)}`);
}

Deno.test("random bytes: every reader gives findings or a clean parse, never an exception", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), fc.boolean(), (bytes, exempt) => {
      const text = new TextDecoder().decode(bytes);
      for (const kind of KINDS) {
        assertSpots(kind, text, exempt);
        assertSpots(kind, "---\n" + text + "\n---\n", exempt);
        assertFixIdempotent(kind, "---\n" + text + "\n---\n", exempt);
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("mutations of real-looking files: findings or a clean parse, and --fix is idempotent", () => {
  const edit = fc.record({
    at: fc.nat(),
    del: fc.nat({ max: 6 }),
    piece: fc.constantFrom(...PIECES),
  });
  fc.assert(
    fc.property(
      fc.nat({ max: TEXTS.length - 1 }),
      fc.array(edit, { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      (i, edits, exempt) => {
        let text = TEXTS[i];
        for (const e of edits) {
          const at = text.length === 0 ? 0 : e.at % (text.length + 1);
          text = text.slice(0, at) + e.piece + text.slice(at + e.del);
        }
        const kind = FILES[i].startsWith("goose/")
          ? "goose"
          : FILES[i].startsWith("codex/")
          ? "codex-agent"
          : FILES[i].startsWith("codex-config/")
          ? "codex-config"
          : FILES[i].startsWith("copilot/")
          ? "copilot"
          : "claude";
        assertSpots(kind, text, exempt);
        assertFixIdempotent(kind, text, exempt);
      },
    ),
    { numRuns: 1500 },
  );
});

Deno.test("deep nesting and long lines do not crash the readers", () => {
  const deep = "---\ntools: " + "[".repeat(5000) + "]".repeat(5000) + "\n---\n";
  assertSpots("claude", deep, false);
  const wide = "---\ndescription: " + "a: ".repeat(20000) + "\ntools: Read\n---\n";
  assertSpots("claude", wide, false);
  const toml = "a = " + "[".repeat(3000) + "]".repeat(3000) + "\n";
  assertSpots("codex-agent", toml, false);
});
