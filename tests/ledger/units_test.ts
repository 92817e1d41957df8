/**
 * The small pieces under the ledger: head parsing, the row scanner's cut of the top-level mac,
 * row signing, UTC seconds, safe reads (never through a symlink, never blocking on a FIFO),
 * atomic writes (mode kept), file locks (refusing symlinks).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { HeadFormatError, headText, headVerifies, parseHead } from "../../lib/ledger/head.ts";
import { SCAN_SLOTS, scanRow, signedPart } from "../../lib/ledger/scan.ts";
import { signRow, utcSeconds } from "../../lib/ledger/row.ts";
import { withFileLock } from "../../lib/ledger/ledger_lock.ts";
import { readRegularFileSync } from "../../lib/fs/safe_read.ts";
import { atomicWriteFileSync } from "../../lib/fs/atomic_write.ts";
import { FsSafetyError, LedgerError, RequestError } from "../../lib/errors.ts";
import { refusalRow } from "../../lib/ledger/row_text.ts";
import { hmacHex, keyOf, pyDumps, removeTree, tempDir, utf8 } from "../_helpers/mod.ts";
import { assertRefusal } from "../_helpers/assert.ts";

const KEY = keyOf("units");
const HEX = "ab".repeat(32);

Deno.test("parseHead: the exact shape, surrounding whitespace ignored", () => {
  const good = headText(3, HEX, KEY.hmac);
  assert.equal(
    good,
    `{"count": 3, "last": "${HEX}", "mac": "${
      hmacHex("units", `{"count": 3, "last": "${HEX}"}`)
    }"}\n`,
  );
  assert.deepEqual(parseHead("  \n" + good + "\n\n"), JSON.parse(good));
  assert.ok(headVerifies(parseHead(good), KEY.hmac));
  assert.ok(!headVerifies(parseHead(good), keyOf("other").hmac));
  assert.equal(headText(0, null, KEY.hmac).startsWith('{"count": 0, "last": null, "mac": '), true);
  const mac = JSON.parse(good).mac;
  for (
    const bad of [
      "",
      "null",
      "[]",
      "1",
      `{"count": 3, "last": "${HEX}"}`,
      `{"count": 3, "last": "${HEX}", "mac": "${mac}", "x": 1}`,
      `{"count": -1, "last": "${HEX}", "mac": "${mac}"}`,
      `{"count": 1.5, "last": "${HEX}", "mac": "${mac}"}`,
      `{"count": "3", "last": "${HEX}", "mac": "${mac}"}`,
      `{"count": 3, "last": "${HEX.toUpperCase()}", "mac": "${mac}"}`,
      `{"count": 3, "last": "${HEX.slice(2)}", "mac": "${mac}"}`,
      `{"count": 3, "last": "", "mac": "${mac}"}`,
      `{"count": 3, "last": "${HEX}", "mac": 5}`,
    ]
  ) {
    assert.throws(() => parseHead(bad), HeadFormatError, bad);
  }
});

Deno.test("signRow: body, time and prev signed canonically; reserved keys refused", async () => {
  const line = signRow({ b: "\u00e9", a: 1 }, KEY.hmac, { time: "t", prev: "" });
  const row = JSON.parse(line);
  const { mac, ...signed } = row;
  assert.deepEqual(signed, { a: 1, b: "\u00e9", prev: "", time: "t" });
  assert.equal(mac, hmacHex("units", pyDumps(signed)));
  assert.equal(line, pyDumps(row));
  for (const k of ["mac", "prev", "time"]) {
    await assertRefusal(
      () => signRow({ [k]: "x" }, KEY.hmac, { time: "t", prev: "" }),
      "ROW_INVALID",
      LedgerError,
    );
  }
  assert.equal(
    utcSeconds(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 999))),
    "2026-01-02T03:04:05+00:00",
  );
});

Deno.test("scanRow/signedPart: only the top-level mac is cut; nested and string look-alikes stay", () => {
  const cases: [string, string | null][] = [
    ['{"a": 1, "mac": "ff"}', '{"a": 1}'],
    ['{"mac": "ff", "z": 1}', '{"z": 1}'],
    ['{"mac": "ff"}', "{}"],
    [
      '{"a": {"mac": "inner"}, "mac": "ff", "s": "\\"mac\\": \\"x\\""}',
      '{"a": {"mac": "inner"}, "s": "\\"mac\\": \\"x\\""}',
    ],
    ['{"a": [1, {"mac": "x"}], "mac": "ff", "time": "t"}', '{"a": [1, {"mac": "x"}], "time": "t"}'],
    ['{"a": "}", "mac": "ff"}', '{"a": "}"}'],
    // Runs of backslashes before a quote: an odd run escapes it, an even one does not.
    ['{"a": "x\\\\", "mac": "ff"}', '{"a": "x\\\\"}'],
    [
      '{"a": "x\\\\\\", \\"mac\\": \\"ee\\"", "mac": "ff"}',
      '{"a": "x\\\\\\", \\"mac\\": \\"ee\\""}',
    ],
    ['{"k\\"ey": "\\\\", "mac": "ff"}', '{"k\\"ey": "\\\\"}'],
    ['{"a": "\\\\\\"}', null],
    // Not the canonical layout, duplicate or non-string mac: no signed part.
    ['{"a":1, "mac": "ff"}', null],
    ['{"mac": "ff", "mac": "ee"}', null],
    ['{"mac": 5}', null],
    ["[]", null],
    ["", null],
    ['{"a": 1}', null],
  ];
  for (const [line, signed] of cases) {
    const p = signedPart(utf8(line));
    if (signed === null) assert.equal(p, null, line);
    else {
      assert.notEqual(p, null, line);
      assert.equal(new TextDecoder().decode(p!.signed), signed, line);
      assert.equal(p!.mac, "ff");
    }
  }
  const out = new Int32Array(SCAN_SLOTS);
  assert.equal(scanRow(utf8('{"prev": "", "time": "t"}'), 0, 25, out), true);
});

Deno.test("readRegularFileSync: symlinks, FIFOs, directories refused without blocking; size cap", async () => {
  const dir = await tempDir("units-read");
  try {
    const f = join(dir, "f");
    await Deno.writeTextFile(f, "0123456789");
    assert.equal(readRegularFileSync(f, { maxBytes: 10 }).bytes.length, 10);
    await assertRefusal(
      () => readRegularFileSync(f, { maxBytes: 9 }),
      "FILE_TOO_LARGE",
      FsSafetyError,
    );
    await Deno.symlink(f, join(dir, "l"));
    await assertRefusal(
      () => readRegularFileSync(join(dir, "l"), { maxBytes: 99 }),
      "SYMLINK",
      FsSafetyError,
    );
    await assertRefusal(
      () => readRegularFileSync(dir, { maxBytes: 99 }),
      "NOT_REGULAR_FILE",
      FsSafetyError,
    );
    const fifo = join(dir, "fifo");
    assert.equal((await new Deno.Command("mkfifo", { args: [fifo] }).output()).code, 0);
    // Held open for writing by nobody: a blocking open would hang this test.
    await assertRefusal(
      () => readRegularFileSync(fifo, { maxBytes: 99 }),
      "NOT_REGULAR_FILE",
      FsSafetyError,
    );
    await Deno.chmod(f, 0o640);
    await assertRefusal(
      () => readRegularFileSync(f, { maxBytes: 99, forbiddenModeBits: 0o077 }),
      "UNSAFE_MODE",
      FsSafetyError,
    );
    await assertRefusal(
      () => readRegularFileSync(f, { maxBytes: 99, ownerUid: 4242 }),
      "UNSAFE_OWNER",
      FsSafetyError,
    );
  } finally {
    await removeTree(dir);
  }
});

Deno.test("atomicWriteFileSync: replaces content, keeps an existing mode, leaves no temp file", async () => {
  const dir = await tempDir("units-atomic");
  try {
    const f = join(dir, "f");
    assert.equal(atomicWriteFileSync(f, "one", { mode: 0o600 }), 0o600);
    assert.equal((await Deno.stat(f)).mode! & 0o777, 0o600);
    await Deno.chmod(f, 0o640);
    const ino = (await Deno.stat(f)).ino;
    atomicWriteFileSync(f, "two", { mode: 0o600 });
    assert.equal(await Deno.readTextFile(f), "two");
    assert.equal((await Deno.stat(f)).mode! & 0o777, 0o640);
    assert.notEqual((await Deno.stat(f)).ino, ino, "replaced by rename, not rewritten in place");
    atomicWriteFileSync(f, "three", { forceMode: 0o644 });
    assert.equal((await Deno.stat(f)).mode! & 0o777, 0o644);
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names, ["f"]);
    // Replacing a symlink replaces the link itself; its target is untouched.
    const target = join(dir, "target");
    await Deno.writeTextFile(target, "keep");
    await Deno.symlink(target, join(dir, "link"));
    atomicWriteFileSync(join(dir, "link"), "new");
    assert.equal(await Deno.readTextFile(target), "keep");
    assert.ok((await Deno.lstat(join(dir, "link"))).isFile);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("withFileLock: refuses a symlink or a directory at the lock path; serializes in process", async () => {
  const dir = await tempDir("units-lock");
  try {
    const target = join(dir, "target");
    await Deno.writeTextFile(target, "");
    await Deno.symlink(target, join(dir, "l.lock"));
    await assertRefusal(
      () => withFileLock(join(dir, "l.lock"), () => 1),
      "LEDGER_UNSAFE_PATH",
      LedgerError,
    );
    await Deno.mkdir(join(dir, "d.lock"));
    await assertRefusal(
      () => withFileLock(join(dir, "d.lock"), () => 1),
      "LEDGER_UNSAFE_PATH",
      LedgerError,
    );
    const p = join(dir, "a.lock");
    const order: string[] = [];
    await Promise.all([1, 2, 3].map((i) =>
      withFileLock(p, async () => {
        order.push(`in${i}`);
        await new Promise((r) => setTimeout(r, 5));
        order.push(`out${i}`);
      })
    ));
    for (let k = 0; k < order.length; k += 2) {
      assert.equal(order[k].slice(2), order[k + 1].slice(3), `interleaved: ${order}`);
    }
    assert.equal((await Deno.stat(p)).mode! & 0o077, 0);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("withFileLock: a lock file replaced while another holds it is LEDGER_TAMPERED, for the waiter (fn not run) and for the holder", async () => {
  const dir = await tempDir("units-lock-replaced");
  try {
    const p = join(dir, "a.lock");
    const replace = async () => {
      await Deno.writeTextFile(join(dir, "copy"), "");
      await Deno.rename(join(dir, "copy"), p);
    };
    // A waiter that opened the old file gets the lock once the holder lets go, and sees the
    // replacement: it refuses without running its fn.
    const holder = await Deno.open(p, { read: true, append: true, create: true });
    await holder.lock(true);
    let waiterRan = false;
    // withFileLock opens the file before its first await: the waiter holds the old file from
    // here on, whenever its flock call gets to run. Its refusal is handled from the start, so it
    // is never an unhandled rejection while the holder lets go.
    const waiter = withFileLock(p, () => {
      waiterRan = true;
    });
    waiter.catch(() => {});
    await replace();
    await holder.unlock();
    holder.close();
    await assertRefusal(() => waiter, "LEDGER_TAMPERED", LedgerError);
    assert.equal(waiterRan, false);
    // A holder whose lock file is replaced meanwhile (a second writer locks the replacement and
    // runs at the same time) refuses once its fn is done.
    // Waits for the event (its fn running, so the lock is held), not for a time.
    let release = () => {};
    let entered = () => {};
    const inside = new Promise<void>((r) => entered = r);
    const held = withFileLock(p, () =>
      new Promise<void>((r) => {
        release = r;
        entered();
      }));
    held.catch(() => {});
    await inside;
    await replace();
    let secondRan = false;
    await withFileLock(p, () => {
      secondRan = true;
    });
    assert.equal(secondRan, true); // the replacement is a different file: nothing stops this one
    release();
    await assertRefusal(() => held, "LEDGER_TAMPERED", LedgerError);
    // A lock file removed while held is refused alike.
    const removed = withFileLock(p, () => Deno.remove(p));
    await assertRefusal(() => removed, "LEDGER_TAMPERED", LedgerError);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("refusalRow: the act's refused row, with the typed code, NOT_CAPABLE or INTERNAL, the reason cut at 300", () => {
  assert.deepEqual(refusalRow("run-request", "w", new RequestError("ARGV_NOT_ALLOWED", "no")), {
    action: "run-request-refused",
    agent: "w",
    reason: "no",
    code: "ARGV_NOT_ALLOWED",
  });
  const untyped = refusalRow("apply-proposal", "?", new Deno.errors.NotFound("x".repeat(400)));
  assert.equal(untyped.code, "INTERNAL");
  assert.equal((untyped.reason as string).length, 300);
  assert.equal(refusalRow("apply-proposal", "?", "plain").reason, "plain");
  // What the CLI reports as NOT_CAPABLE is recorded as NOT_CAPABLE, not INTERNAL.
  const denied = refusalRow("run-request", "?", new Deno.errors.NotCapable("Requires read access"));
  assert.equal(denied.code, "NOT_CAPABLE");
});
