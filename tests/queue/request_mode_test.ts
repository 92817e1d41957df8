/**
 * The queue's request schemas (strict, per channel, exported without drift), the names that are
 * requests, the liveness rule, the pins, and the queue-mode decision.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { QueueError } from "../../lib/errors.ts";
import { idOfName, queuePaths } from "../../lib/queue/queue_paths.ts";
import { parseRequest, requestJsonSchema } from "../../lib/queue/queued_request.ts";
import { isFreshBeat } from "../../lib/queue/liveness.ts";
import { checkPins, pinPaths, readPins } from "../../lib/queue/pins.ts";
import { briefQueueReason, queueModeReason } from "../../lib/queue/mode.ts";
import { assertRefusal } from "../_helpers/assert.ts";
import { REPO_ROOT, tempDir } from "../_helpers/mod.ts";

const KEY = btoa("k".repeat(32));

Deno.test("request schemas: strict per kind; the tool-server channel takes run-request with via_agent only", () => {
  const art = { kind: "command-request" };
  assert.equal(
    parseRequest({ kind: "verify-ledger", reply_key: KEY }, "orchestrator").kind,
    "verify-ledger",
  );
  assert.equal(
    parseRequest({ kind: "run-request", artifact: art, via_agent: "w", reply_key: KEY }, "mcp")
      .kind,
    "run-request",
  );
  const bad: [unknown, "orchestrator" | "mcp", RegExp][] = [
    [{ kind: "rm-rf", reply_key: KEY }, "orchestrator", /kind/],
    [{ kind: "verify-ledger", reply_key: KEY, root: "/" }, "orchestrator", /root|unrecognized/i],
    [{ kind: "verify-ledger" }, "orchestrator", /reply_key/],
    [{ kind: "verify-ledger", reply_key: "short" }, "orchestrator", /reply_key/],
    [{ kind: "issue-dispatch", agent: "Bad Slug", reply_key: KEY }, "orchestrator", /agent/],
    [{ kind: "apply-proposal", artifact: art, reply_key: KEY }, "orchestrator", /dry_run/],
    [
      { kind: "run-request", artifact: art, via_agent: "w", reply_key: KEY },
      "orchestrator",
      /via_agent/,
    ],
    [{ kind: "run-request", artifact: art, reply_key: KEY }, "mcp", /via_agent/],
    [{ kind: "verify-ledger", reply_key: KEY }, "mcp", /only run-request/],
    [[], "orchestrator", /invalid/],
  ];
  for (const [value, channel, re] of bad) {
    const e = assertRefusal(() => parseRequest(value, channel), "REQUEST_INVALID", QueueError);
    assert.match(e.message, re, JSON.stringify(value));
  }
});

Deno.test("schemas/queue-request.schema.json equals the schema (no drift)", async () => {
  const committed = await Deno.readTextFile(
    join(REPO_ROOT, "schemas", "queue-request.schema.json"),
  );
  assert.equal(committed, JSON.stringify(requestJsonSchema(), null, 2) + "\n");
});

Deno.test("request names: 32 lower-case hex + .json, nothing else (temp files, upper case, paths)", () => {
  const id = "0123456789abcdef0123456789abcdef";
  assert.equal(idOfName(`${id}.json`), id);
  for (
    const n of [
      `.${id}.tmp`,
      `${id.toUpperCase()}.json`,
      `${id}.json.tmp`,
      `../${id}.json`,
      `${id}`,
      `x${id}.json`,
    ]
  ) {
    assert.equal(idOfName(n), null, n);
  }
  assert.equal(queuePaths("/p").claimed, "/p/.agentteams/queue-claimed");
});

Deno.test("a beat is fresh for 15 s; a malformed or future-dated file is not a live runner", () => {
  const now = new Date("2026-12-01T12:00:00Z");
  const at = (s: string) => JSON.stringify({ beat: s });
  assert.equal(isFreshBeat(at("2026-12-01T11:59:46Z"), now), true);
  assert.equal(isFreshBeat(at("2026-12-01T11:59:45Z"), now), false);
  assert.equal(isFreshBeat(at("2026-12-01T12:01:00Z"), now), false);
  assert.equal(isFreshBeat(at("yesterday"), now), false);
  assert.equal(isFreshBeat("[]", now), false);
});

Deno.test("pins: a changed, removed or new pinned file is RUNNER_PIN_CHANGED naming it", async () => {
  const dir = await tempDir("pins");
  const brief = join(dir, "agentteams.json");
  Deno.writeTextFileSync(brief, "{}");
  const paths = pinPaths(dir, brief, join(dir, "confined.json"));
  const at = await readPins(paths);
  checkPins(at, await readPins(paths), paths);
  Deno.writeTextFileSync(brief, "{ }");
  const edited = await readPins(paths);
  const e = assertRefusal(
    () => checkPins(at, edited, paths),
    "RUNNER_PIN_CHANGED",
    QueueError,
  );
  assert.match(e.message, /the brief/);
  Deno.writeTextFileSync(brief, "{}");
  Deno.mkdirSync(join(dir, "references"));
  Deno.writeTextFileSync(join(dir, "references/capability-grants.log.csv"), "x\n");
  const grown = await readPins(paths);
  assert.match(
    assertRefusal(() => checkPins(at, grown, paths), "RUNNER_PIN_CHANGED", QueueError).message,
    /grants ledger/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("queue mode: orchestrator-only, a brief that cannot be read, or a fresh beat; else direct", async () => {
  assert.equal(
    briefQueueReason('{"write_policy": "orchestrator-only"}'),
    "the brief says write_policy orchestrator-only",
  );
  assert.equal(
    briefQueueReason('// c\n{"write_policy": "orchestrator-only",}'),
    "the brief says write_policy orchestrator-only",
  );
  assert.equal(briefQueueReason('{"write_policy": "cooperative"}'), null);
  assert.match(briefQueueReason("{")!, /cannot be read/);
  assert.match(briefQueueReason("[1]")!, /cannot be read/);
  const dir = await tempDir("mode");
  const now = new Date();
  assert.equal(await queueModeReason(dir, null, now), null, "no brief, no runner");
  Deno.writeTextFileSync(join(dir, "agentteams.json"), '{"write_policy": "orchestrator-only"}');
  assert.match((await queueModeReason(dir, null, now))!, /orchestrator-only/);
  Deno.writeTextFileSync(join(dir, "agentteams.json"), "{}");
  assert.equal(await queueModeReason(dir, null, now), null);
  Deno.writeFileSync(join(dir, "agentteams.json"), new Uint8Array([0xff, 0xfe]));
  assert.match((await queueModeReason(dir, null, now))!, /cannot be read/);
  Deno.writeTextFileSync(join(dir, "agentteams.json"), "{}");
  Deno.mkdirSync(join(dir, ".agentteams-status"));
  Deno.writeTextFileSync(
    join(dir, ".agentteams-status/runner.json"),
    JSON.stringify({ beat: now.toISOString() }),
  );
  assert.equal(await queueModeReason(dir, null, now), "a runner serves this project");
  Deno.writeTextFileSync(
    join(dir, ".agentteams-status/runner.json"),
    JSON.stringify({ beat: new Date(now.getTime() - 60_000).toISOString() }),
  );
  assert.equal(await queueModeReason(dir, null, now), null, "a stale beat is no runner");
  await Deno.remove(dir, { recursive: true });
});
