/**
 * The precomputed class bodies `pyre.ts` compiles `\w`, `\d` and `\s` to are exactly what the
 * generator makes of CPython's tables (so the tables and the bodies cannot drift apart).
 */
import assert from "node:assert/strict";
import { classesModule, tableBody } from "../../scripts/gen_pyre_classes.ts";
import { UNI_DIGIT, UNI_SPACE, UNI_WORD } from "../../lib/pycompat/pyre_classes.ts";
import { PY_DIGIT, PY_SPACE, PY_WORD } from "../../lib/pycompat/pyre_unicode.ts";

Deno.test("pyre_classes.ts is the generator's output over pyre_unicode.ts's tables", () => {
  const committed = Deno.readTextFileSync(
    new URL("../../lib/pycompat/pyre_classes.ts", import.meta.url),
  );
  assert.equal(
    committed,
    classesModule(),
    "run `deno run --allow-read --allow-write scripts/gen_pyre_classes.ts`",
  );
  assert.equal(UNI_WORD, tableBody(PY_WORD));
  assert.equal(UNI_DIGIT, tableBody(PY_DIGIT));
  assert.equal(UNI_SPACE, tableBody(PY_SPACE));
  // The bodies are the ranges themselves: `\d` holds ASCII digits and ARABIC-INDIC digits.
  const d = new RegExp(`^[${UNI_DIGIT}]$`, "v");
  assert.ok(d.test("7") && d.test("\u0663") && !d.test("a"));
});
