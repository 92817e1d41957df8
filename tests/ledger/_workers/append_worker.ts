/**
 * A real appending process for the concurrency and crash tests:
 *
 *   deno run -A append_worker.ts ROOT KEY_TEXT TAG COUNT|forever [GO_FILE]
 *
 * Waits for GO_FILE to exist (when given), prints `start`, then appends COUNT rows (or until
 * killed) `{action: "note", tag, i, pad}` and prints `i` after each append returned.
 *
 * @module
 */
import { appendRow } from "../../../lib/ledger/append.ts";
import { HmacKey } from "../../../lib/crypto/hash.ts";

const [root, keyText, tag, countArg, goFile] = Deno.args;
const hmac = new HmacKey(new TextEncoder().encode(keyText));
const count = countArg === "forever" ? Infinity : Number(countArg);
const enc = new TextEncoder();
const say = (s: string) => {
  const b = enc.encode(s + "\n");
  let off = 0;
  while (off < b.length) off += Deno.stdout.writeSync(b.subarray(off));
};

if (goFile) {
  say("ready");
  for (;;) {
    try {
      Deno.statSync(goFile);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}
say("start");
for (let i = 0; i < count; i++) {
  // Rows of varying size, so a kill can land anywhere in a row's life.
  const pad = "x".repeat((i * 7919) % 4096);
  await appendRow(root, hmac, { action: "note", tag, i, pad });
  say(String(i));
}
