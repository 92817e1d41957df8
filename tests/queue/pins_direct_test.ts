/**
 * The runner's pin of the operator's direct-write grants file (lib/queue/pins.ts): absent is
 * `null`, a change is `RUNNER_PIN_CHANGED` naming the file, and a FIFO or a link at the path is
 * a state of its own, never read through (a FIFO cannot hang the runner's every check).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { checkPins, pinPaths, readPins } from "../../lib/queue/pins.ts";
import { QueueError } from "../../lib/errors.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("pins: the direct-grants file, absent, changed, a FIFO, a link", () => {
  const dir = Deno.makeTempDirSync({ prefix: "at-pins-direct-" });
  try {
    const file = join(dir, "grants.json");
    const paths = pinPaths(dir, join(dir, "agentteams.jsonc"), null, file);
    const absent = readPins(paths);
    assert.equal(absent.direct, null);
    Deno.writeTextFileSync(file, "[]\n");
    const at = readPins(paths);
    assert.equal(at.direct, sha256Hex("[]\n"));
    const e = assertRefusal(() => checkPins(absent, at, paths), "RUNNER_PIN_CHANGED", QueueError);
    assert.match(e.message, /the operator's direct-write grants file \(.*grants\.json\) changed/);
    checkPins(at, readPins(paths), paths);

    Deno.removeSync(file);
    const mk = new Deno.Command("mkfifo", { args: [file] }).outputSync();
    assert.equal(mk.code, 0, "mkfifo");
    const fifo = readPins(paths).direct;
    assert.match(String(fifo), /^unreadable:/);
    assertRefusal(() => checkPins(at, readPins(paths), paths), "RUNNER_PIN_CHANGED", QueueError);

    Deno.removeSync(file);
    Deno.writeTextFileSync(join(dir, "real.json"), "[]\n");
    Deno.symlinkSync(join(dir, "real.json"), file);
    const link = readPins(paths).direct;
    assert.match(String(link), /^unreadable:/, "a link is never followed");
    assert.notEqual(link, at.direct);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
