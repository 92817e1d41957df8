/** The shared prev_digest chain check (lib/crypto/chain.ts) against one hash per row. */
import assert from "node:assert/strict";
import { firstChainBreak } from "../../lib/crypto/chain.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";

/** The chain as one hash per row computes it (what firstChainBreak must agree with). */
function reference(payloads: readonly string[], prevs: readonly string[]): number | null {
  let prev = "";
  for (let i = 0; i < payloads.length; i++) {
    if (prevs[i] !== prev) return i;
    prev = sha256Hex(payloads[i]);
  }
  return null;
}

function chain(n: number, text: (i: number) => string): { payloads: string[]; prevs: string[] } {
  const payloads: string[] = [];
  const prevs: string[] = [];
  let prev = "";
  for (let i = 0; i < n; i++) {
    payloads.push(text(i));
    prevs.push(prev);
    prev = sha256Hex(payloads[i]);
  }
  return { payloads, prevs };
}

Deno.test("firstChainBreak: an intact chain across several batches holds", () => {
  const c = chain(
    5000,
    (i) => `2026-11-29|delete:f${i}|PASS|verified|security|${"x".repeat(i % 200)}`,
  );
  assert.equal(firstChainBreak(c.payloads, c.prevs), null);
  assert.equal(reference(c.payloads, c.prevs), null);
});

Deno.test("firstChainBreak: finds the first broken row wherever it is, as one hash per row does", () => {
  const c = chain(4500, (i) => `row ${i}`);
  for (const at of [1, 2, 2047, 2048, 2049, 4095, 4096, 4499]) {
    for (
      const bad of [
        "",
        "0".repeat(64),
        c.prevs[at].toUpperCase(),
        c.prevs[at].slice(1),
        `${c.prevs[at]} `,
        "\u00e9".repeat(64),
      ]
    ) {
      const prevs = c.prevs.slice();
      prevs[at] = bad;
      assert.equal(firstChainBreak(c.payloads, prevs), at, `row ${at} prev ${JSON.stringify(bad)}`);
      assert.equal(reference(c.payloads, prevs), at);
    }
    // An edited payload breaks the row after it.
    const payloads = c.payloads.slice();
    payloads[at - 1] += "!";
    assert.equal(firstChainBreak(payloads, c.prevs), at);
  }
});

Deno.test("firstChainBreak: the first row's prev must be empty", () => {
  const c = chain(3, (i) => `r${i}`);
  assert.equal(firstChainBreak(c.payloads, ["x", ...c.prevs.slice(1)]), 0);
  assert.equal(firstChainBreak([], []), null);
});

Deno.test("firstChainBreak: non-ASCII payloads hash as UTF-8 (the per-row path)", () => {
  const c = chain(3000, (i) => (i % 7 === 0 ? `r\u00e9sum\u00e9 ${i} \u{1f600}` : `r${i}`));
  assert.equal(firstChainBreak(c.payloads, c.prevs), null);
  const payloads = c.payloads.slice();
  payloads[2100] = "r\u00e9sume 2100";
  assert.equal(firstChainBreak(payloads, c.prevs), 2101);
});

Deno.test("firstChainBreak: a continuation's first prev must be the carry it is given", () => {
  const payloads = ["a", "b", "c"];
  const whole = ["", sha256Hex("a"), sha256Hex("b")];
  assert.equal(firstChainBreak(payloads, whole), null);
  // The last two rows on their own, continuing from row 0's hash.
  assert.equal(firstChainBreak(payloads.slice(1), whole.slice(1), sha256Hex("a")), null);
  assert.equal(firstChainBreak(payloads.slice(1), whole.slice(1), sha256Hex("x")), 0);
  assert.equal(firstChainBreak(payloads.slice(1), whole.slice(1)), 0, "no carry: must be empty");
});
