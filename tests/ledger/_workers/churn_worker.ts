/**
 * A real process doing what key holders do to a project's state, for the verify-under-load test:
 *
 *   deno run -A churn_worker.ts ROOT KEY_TEXT TAG GO_FILE STOP_FILE MAX_ROUNDS
 *
 * Prints `ready`, waits for GO_FILE, then until STOP_FILE exists (or MAX_ROUNDS rounds are done)
 * runs rounds of: issue a dispatch (an `issue-dispatch` row, the store rewritten by rename),
 * count an attempt and spend a use (store appends), append the act's row naming the dispatch (as
 * `apply` does: the use first, then the row), and append a note of varying size. Prints the round
 * number after each round, and `done ROUNDS ROWS` at the end (ROWS: ledger rows it appended).
 *
 * @module
 */
import { appendRow } from "../../../lib/ledger/append.ts";
import { issueDispatch, resolveDispatch } from "../../../lib/ledger/dispatch.ts";
import { dispatchTag } from "../../../lib/ledger/dispatch_acts.ts";
import { HmacKey } from "../../../lib/crypto/hash.ts";

const [root, keyText, tag, goFile, stopFile, maxArg] = Deno.args;
const hmac = new HmacKey(new TextEncoder().encode(keyText));
const maxRounds = Number(maxArg);
const enc = new TextEncoder();
const say = (s: string) => {
  const b = enc.encode(s + "\n");
  let off = 0;
  while (off < b.length) off += Deno.stdout.writeSync(b.subarray(off));
};
const exists = (path: string) => {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
};

say("ready");
while (!exists(goFile)) await new Promise((r) => setTimeout(r, 2));
let rows = 0;
let round = 0;
for (; round < maxRounds && !exists(stopFile); round++) {
  const agent = `churn-${tag}`;
  const { nonce, id } = await issueDispatch(root, hmac, agent);
  rows++;
  await resolveDispatch(root, hmac, nonce, { count: "attempt", expectAgent: agent });
  await resolveDispatch(root, hmac, nonce, { count: "use", expectAgent: agent });
  await appendRow(root, hmac, {
    action: "apply-proposal",
    agent,
    path: `churn/${tag}/${round}.txt`,
    base: "absent",
    new: "0".repeat(64),
    bytes: 0,
    gates: [],
    rationale: "verify under load",
    dispatch: dispatchTag(id),
  });
  rows++;
  await appendRow(root, hmac, {
    action: "note",
    tag,
    round,
    pad: "x".repeat((round * 7919) % 3000),
  });
  rows++;
  say(String(round));
}
say(`done ${round} ${rows}`);
