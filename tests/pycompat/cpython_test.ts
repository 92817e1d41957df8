/**
 * lib/pycompat/ against CPython itself (python3 on this machine; the test fails when it is
 * missing): canonical JSON against `json.dumps(v, sort_keys=True)`, the CSV quoting against
 * `csv.writer`, and the ISO reading against `datetime.fromisoformat`, each on generated inputs rich
 * in the cases where a JavaScript reading would differ. (pyre, fnmatch and pyStrip have their own
 * CPython tests: tests/policy/pyre_diff_test.ts, tests/policy/fnmatch_test.ts's vectors,
 * tests/authz/verify_fast_paths_test.ts.)
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { canonical } from "../../lib/pycompat/canonical.ts";
import { formatRecord } from "../../lib/pycompat/csv_quote.ts";
import { parseInstant } from "../../lib/pycompat/isoformat.ts";

/** Runs a Python script on JSON in (`data`), JSON out (what it prints). */
function python(script: string, input: unknown): unknown {
  const out = new Deno.Command("python3", {
    args: ["-c", `import json, sys\ndata = json.load(sys.stdin)\n${script}`],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = out.spawn();
  const w = child.stdin.getWriter();
  return (async () => {
    await w.write(new TextEncoder().encode(JSON.stringify(input)));
    await w.close();
    const r = await child.output();
    assert.equal(r.code, 0, `python3 failed: ${new TextDecoder().decode(r.stderr)}`);
    return JSON.parse(new TextDecoder().decode(r.stdout));
  })();
}

const TRICKY = ["", " ", ",", '"', "\r", "\n", "\r\n", "a", "é", "\u2028", "\u{1f600}", "\t"];
const cell = fc.array(fc.constantFrom(...TRICKY), { maxLength: 5 }).map((a) => a.join(""));

Deno.test("pycompat: formatRecord is csv.writer's QUOTE_MINIMAL record, byte for byte", async () => {
  const rows = fc.sample(fc.array(cell, { minLength: 1, maxLength: 4 }), 2000);
  rows.push([""], ["", ""], ['"'], ["a,b", "c"]);
  const want = await python(
    "import csv, io\nout = []\nfor r in data:\n" +
      "  b = io.StringIO(); csv.writer(b).writerow(r); out.append(b.getvalue()[:-2])\n" +
      "print(json.dumps(out))",
    rows,
  ) as string[];
  assert.deepEqual(rows.map(formatRecord), want);
});

Deno.test("pycompat: canonical is json.dumps(v, sort_keys=True), byte for byte", async () => {
  const key = fc.oneof(cell, fc.string({ maxLength: 6 }));
  const leaf = fc.oneof(cell, fc.integer(), fc.boolean(), fc.constant(null));
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: "small" },
      leaf,
      fc.array(tie("v"), { maxLength: 3 }),
      fc.dictionary(key, tie("v"), { maxKeys: 3 }),
    ),
  })).v;
  const values = fc.sample(value, 1000);
  const want = await python(
    "print(json.dumps([json.dumps(v, sort_keys=True) for v in data]))",
    values,
  ) as string[];
  assert.deepEqual(values.map((v) => canonical(v)), want);
});

Deno.test("pycompat: parseInstant reads what datetime.fromisoformat reads, to the millisecond", async () => {
  const two = (lo: number, hi: number) =>
    fc.integer({ min: lo, max: hi }).map((n) => String(n).padStart(2, "0"));
  const date = fc.tuple(fc.integer({ min: 1, max: 9999 }), two(0, 13), two(0, 32)).map(
    ([y, m, d]) => `${String(y).padStart(4, "0")}-${m}-${d}`,
  );
  const time = fc.tuple(
    fc.constantFrom("T", " "),
    two(0, 24),
    fc.option(fc.tuple(fc.constantFrom(":", ""), two(0, 60))),
    fc.option(fc.tuple(fc.constantFrom(":", ""), two(0, 60))),
    fc.option(
      fc.tuple(fc.constantFrom(".", ","), fc.constantFrom("1", "12", "123", "1234", "123456")),
    ),
  ).map(([sep, h, m, s, f]) => {
    let t = sep + h;
    if (m === null) return t;
    t += m[0] + m[1];
    if (s === null) return t;
    t += m[0] + s[1];
    return f === null ? t : t + f[0] + f[1];
  });
  const offset = fc.oneof(
    fc.constant(""),
    fc.constant("Z"),
    fc.tuple(fc.constantFrom("+", "-"), two(0, 24), fc.constantFrom("", ":00", ":30", "30"))
      .map(
        ([s, h, m]) => s + h + m,
      ),
  );
  const text = fc.tuple(date, fc.option(fc.tuple(time, offset))).map(([d, t]) =>
    t === null ? d : d + t[0] + t[1]
  );
  const texts = [...new Set(fc.sample(text, 3000))];
  texts.push("2026-02-29", "2024-02-29", "1900-02-29", "2000-02-29", "0001-01-01T00:00:00Z");
  const want = await python(
    "from datetime import datetime, timezone\nout = []\nfor s in data:\n" +
      "  try:\n    d = datetime.fromisoformat(s)\n  except ValueError:\n    out.append(None); continue\n" +
      "  naive = d.tzinfo is None\n  if naive: d = d.replace(tzinfo=timezone.utc)\n" +
      "  x = d - datetime(1970, 1, 1, tzinfo=timezone.utc)\n" +
      "  out.append([x.days * 86400000 + x.seconds * 1000 + x.microseconds // 1000, naive])\n" +
      "print(json.dumps(out))",
    texts,
  ) as ([number, boolean] | null)[];
  const ours = texts.map((s) => {
    const t = parseInstant(s);
    return t === null ? null : [t.ms, t.naive];
  });
  const differ = texts.flatMap((s, i) =>
    JSON.stringify(ours[i]) === JSON.stringify(want[i])
      ? []
      : [`${s}: ours ${JSON.stringify(ours[i])}, CPython ${JSON.stringify(want[i])}`]
  );
  assert.deepEqual(differ.slice(0, 10), []);
  // The sample held both readable and unreadable texts (the comparison could fail either way).
  assert.ok(want.some((w) => w === null) && want.some((w) => w !== null && !w[1]));
  // One known difference, on the refusing side: CPython takes an offset's minutes past 59
  // ("+15:60" is sixteen hours); parseInstant refuses them (an expiry it cannot read is
  // EXPIRY_INVALID). Asserted both ways so a change on either side is seen.
  const sixty = "2026-12-01T00:00:00+15:60";
  assert.equal(parseInstant(sixty), null);
  assert.notEqual(
    await python(
      "from datetime import datetime\nprint(json.dumps(str(datetime.fromisoformat(data))))",
      sixty,
    ),
    null,
  );
});
