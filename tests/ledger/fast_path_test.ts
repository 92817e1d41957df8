/**
 * The fast path never accepts a row the slow path refuses. The fast path is what verification
 * runs: the WebAssembly scanner (`scan_row`, `scan_lines` in lib/crypto/wasm/sha256.c) finds the
 * top-level `mac` member, and the row's MAC is checked over the line with that member cut out,
 * with no JSON parse and no re-serialisation. The slow path is the earlier tool's: parse the
 * line, take `mac` out, and check the HMAC of the canonical JSON of the rest
 * (scripts/bench/verify_ref.py does the same in Python).
 *
 * The lines are crafted against the cut: rows signed with the test key whose strings hold
 * `"mac": "`, escaped quotes and backslashes, nested `mac` keys; then the same lines with a mac
 * member inserted at every kind of place (inside strings, inside nested objects, at member
 * boundaries), duplicate keys, non-canonical spacing, and single-character edits. Each line goes
 * through both fast-path entries (`judgeRow`, one line; the batch checker, `checkLedgerBytes`),
 * and they must agree with each other.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { checkLedgerBytes } from "../../lib/ledger/verify_rows.ts";
import { judgeRow } from "../../lib/ledger/row.ts";
import { canonical, type JsonObject } from "../../lib/pycompat/canonical.ts";
import { hmacHex, keyOf, utf8 } from "../_helpers/mod.ts";

const KEY_TEXT = "fast-path-key";
const KEY = keyOf(KEY_TEXT);
const HEX = "0123456789abcdef";

/** The slow path: parse, take `mac` out, HMAC the canonical JSON of the rest; `prev` is "". */
function slowAccepts(line: string): boolean {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return false;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const { mac, ...rest } = v as Record<string, unknown>;
  if (typeof mac !== "string" || typeof rest.prev !== "string" || typeof rest.time !== "string") {
    return false;
  }
  let signed: string;
  try {
    signed = canonical(rest as JsonObject);
  } catch {
    return false;
  }
  return hmacHex(KEY_TEXT, signed) === mac && rest.prev === "";
}

/** The fast path, both entries; they must agree. */
function fastAccepts(line: string): boolean {
  const b = utf8(line);
  const one = judgeRow(b, KEY.hmac, "").fault === null;
  const batch = checkLedgerBytes(utf8(line + "\n"), KEY.bytes).fault(0) === null;
  assert.equal(batch, one, `judgeRow and the batch checker disagree on ${JSON.stringify(line)}`);
  return one;
}

/** Strings built to confuse a scanner that does not track strings and escapes. */
const tricky = fc.oneof(
  fc.constantFrom(
    '"mac": "',
    '", "mac": "',
    "\\",
    '\\"',
    '\\\\"',
    '"}',
    '{"mac": "x"}',
    ", ",
    ": ",
  ),
  fc.stringMatching(/^[a-f0-9]{64}$/),
  fc.string({
    unit: fc.constantFrom("a", '"', "\\", ",", " ", ":", "{", "}", "[", "]", "é"),
    maxLength: 20,
  }),
);

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    tricky,
    fc.integer({ min: -3, max: 3 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("mac", "prev", "time", "a", "m"), tie("v"), { maxKeys: 3 }),
  ),
})).v;

const body = fc.dictionary(
  fc.constantFrom("action", "agent", "rationale", "a", "mab", "mad", "ma", "z", "nested"),
  value,
  { maxKeys: 5 },
);

/** A signed line and the text its MAC covers. */
function signed(b: Record<string, unknown>): { line: string; text: string; mac: string } {
  const full = { ...b, time: "t", prev: "" } as JsonObject;
  const text = canonical(full);
  const mac = hmacHex(KEY_TEXT, text);
  return { line: canonical({ ...full, mac }), text, mac };
}

/** Ways to change a signed line without the key. */
const edit = fc.oneof(
  // The mac member (this row's, or another valid-looking one) inserted anywhere in the signed
  // text: inside strings, inside nested objects, at member boundaries.
  fc.record({
    kind: fc.constant("insert-mac" as const),
    at: fc.nat(),
    form: fc.constantFrom('"mac": "M", ', ', "mac": "M"', '"mac": "M"', '"mac":"M",'),
    own: fc.boolean(),
    structural: fc.boolean(),
  }),
  // A duplicate key appended next to the real one.
  fc.record({
    kind: fc.constant("duplicate" as const),
    key: fc.constantFrom("mac", "prev", "time", "action"),
    front: fc.boolean(),
  }),
  // Non-canonical spacing at one separator.
  fc.record({
    kind: fc.constant("spacing" as const),
    nth: fc.nat(),
    form: fc.constantFrom(",", ":", ",  ", " :"),
  }),
  // One character inserted, removed or replaced.
  fc.record({
    kind: fc.constant("char" as const),
    at: fc.nat(),
    op: fc.constantFrom("insert", "remove", "replace"),
    ch: fc.constantFrom('"', "\\", " ", ",", ":", "{", "}", "a", "0"),
  }),
);

function applyEdit(
  s: { line: string; text: string; mac: string },
  e: typeof edit extends fc.Arbitrary<infer T> ? T : never,
): string {
  const other = HEX.repeat(4);
  switch (e.kind) {
    case "insert-mac": {
      // Mostly at a member boundary of any depth (after `{`, `[` or `, `, before `}` or `]`),
      // where a scanner that lost track of depth or strings would cut; else anywhere.
      const bounds = [...s.text.matchAll(/(?<=[{[]|, )|(?=[}\]])/g)].map((m) => m.index as number);
      const at = e.structural && bounds.length > 0
        ? bounds[e.at % bounds.length]
        : e.at % (s.text.length + 1);
      const member = e.form.replace("M", e.own ? s.mac : other);
      return s.text.slice(0, at) + member + s.text.slice(at);
    }
    case "duplicate": {
      const member = `"${e.key}": "${e.key === "mac" ? other : ""}"`;
      return e.front ? `{${member}, ${s.line.slice(1)}` : `${s.line.slice(0, -1)}, ${member}}`;
    }
    case "spacing": {
      const seps = [...s.line.matchAll(/, |: /g)];
      if (seps.length === 0) return s.line;
      const m = seps[e.nth % seps.length];
      const at = m.index as number;
      const form = m[0] === ", " ? e.form.replace(":", ",") : e.form.replace(",", ":");
      return s.line.slice(0, at) + form + s.line.slice(at + 2);
    }
    case "char": {
      const at = e.at % (s.line.length + 1);
      if (e.op === "insert") return s.line.slice(0, at) + e.ch + s.line.slice(at);
      if (e.op === "remove") return s.line.slice(0, at) + s.line.slice(at + 1);
      return s.line.slice(0, at) + e.ch + s.line.slice(at + 1);
    }
  }
}

Deno.test("property: a signed row is accepted by both paths", () => {
  fc.assert(
    fc.property(body, (b) => {
      const s = signed(b);
      assert.equal(slowAccepts(s.line), true);
      assert.equal(fastAccepts(s.line), true);
    }),
    { numRuns: 400 },
  );
});

Deno.test("property: the fast path never accepts a crafted line the slow path refuses", () => {
  let accepted = 0;
  let total = 0;
  fc.assert(
    fc.property(body, fc.array(edit, { minLength: 1, maxLength: 2 }), (b, edits) => {
      const s = signed(b);
      let line = s.line;
      for (const e of edits) line = applyEdit({ ...s, line }, e);
      total++;
      if (fastAccepts(line)) {
        accepted++;
        assert.equal(slowAccepts(line), true, `fast path accepted ${JSON.stringify(line)}`);
      }
    }),
    { numRuns: 3000 },
  );
  // The edits include ones that keep the row valid (the mac moved to another member boundary):
  // the test would prove little if the fast path refused everything.
  assert.ok(accepted > 0 && accepted < total, `${accepted} of ${total} accepted`);
});

Deno.test("the row's own MAC moved into a nested object, a string or an array is refused by both paths; moved to another top-level boundary, accepted by both", () => {
  const s = signed({
    a: { x: 1, y: "}" },
    b: 'he said "mac": "\\',
    c: ["mac", { m: 1 }],
  });
  const member = `"mac": "${s.mac}"`;
  const at = (needle: string, after = true) => {
    const i = s.text.indexOf(needle);
    assert.ok(i >= 0, needle);
    return after ? i + needle.length : i;
  };
  const put = (i: number, m: string) => s.text.slice(0, i) + m + s.text.slice(i);
  const refused = [
    put(at('"y": "}"'), `, ${member}`), // the last member of a nested object
    put(at('{"x"', false) + 1, `${member}, `), // the first member of a nested object
    put(at("he said "), member), // inside a string
    put(at('"mac", '), `${member}, `), // an array's element
    put(at('{"m": 1'), `, ${member}`), // an object inside an array
  ];
  for (const line of refused) {
    assert.equal(slowAccepts(line), false, line);
    assert.equal(fastAccepts(line), false, line);
  }
  // Before `b`, at the top level: not where canonical JSON puts it, but the same signed text.
  const moved = put(at('"b"', false), `${member}, `);
  assert.notEqual(moved, s.line);
  assert.equal(slowAccepts(moved), true);
  assert.equal(fastAccepts(moved), true);
});
