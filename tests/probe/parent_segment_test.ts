/**
 * Probe finding H (low): `hasParentSegment` treats only `/`, `\` and the end of the argument as
 * what may follow a `..`. Its own reasoning ("a program may read a path glued to an option or
 * after a separator of its own, so nothing before the `..` counts as a boundary") applies after
 * the `..` as well: list-valued options split on `,`, `:` or `;` (`deno --allow-write=src,..,x`,
 * `java -cp lib:..:x`, `--exclude=..;x`), and then `..` is a whole path. Each of these is
 * allowed today; a pattern such as `[a-z]+(?:,[a-z.]+)*` passes the probe table and admits them.
 * Under confinement the sandbox still bounds the writes, so this is defence in depth (it matters
 * under `--unconfined` and for reads).
 *
 * Expected: refused, like `x,..` (which ends in `..`) already is.
 */
import assert from "node:assert/strict";
import { hasParentSegment } from "../../lib/requests/arg_paths.ts";

Deno.test("probe H: a `..` followed by a list separator is a parent segment", () => {
  const cases = ["src,..,x", "--allow-write=..,src", "lib:..:x", "..;x", "-I..:inc"];
  const allowed = cases.filter((c) => !hasParentSegment(c));
  assert.deepEqual(allowed, [], `allowed today: ${JSON.stringify(allowed)}`);
  // Controls: already refused.
  assert.equal(hasParentSegment("src,.."), true);
  assert.equal(hasParentSegment("a,../b"), true);
});
