/**
 * A real process that tries to spend one use of a dispatch:
 *
 *   deno run -A spend_worker.ts ROOT KEY_TEXT NONCE GO_FILE
 *
 * Prints `ready`, waits for GO_FILE, then resolves the nonce with `count: "use"` and prints one
 * JSON line: `{"ok": true, "uses": N}` or `{"ok": false, "code": CODE}`, with `from` and `to`, the
 * wall-clock instants (ms, sub-millisecond) the attempt started and ended, so the test can show
 * the attempts overlapped (the race was run, not 16 attempts one after another).
 *
 * @module
 */
import { resolveDispatch } from "../../../lib/ledger/dispatch.ts";
import { HmacKey } from "../../../lib/crypto/hash.ts";

const [root, keyText, nonce, goFile] = Deno.args;
const hmac = new HmacKey(new TextEncoder().encode(keyText));
console.log("ready");
for (;;) {
  try {
    Deno.statSync(goFile);
    break;
  } catch {
    await new Promise((r) => setTimeout(r, 2));
  }
}
const now = () => performance.timeOrigin + performance.now();
const from = now();
try {
  const rec = await resolveDispatch(root, hmac, nonce, { count: "use" });
  console.log(JSON.stringify({ ok: true, uses: rec.uses, from, to: now() }));
} catch (e) {
  const code = (e as { code?: string }).code ?? String(e);
  console.log(JSON.stringify({ ok: false, code, from, to: now() }));
}
