import assert from "node:assert/strict";
import { readAtSync, readWholeFileSync } from "../../lib/fs/read_at.ts";

Deno.test("readAtSync: fills the buffer from the offset, and says how much at end of file", () => {
  const path = Deno.makeTempFileSync({ prefix: "at-read-at-" });
  try {
    Deno.writeTextFileSync(path, "0123456789");
    using f = Deno.openSync(path);
    const buf = new Uint8Array(4);
    assert.equal(readAtSync(f, 3, buf), 4);
    assert.equal(new TextDecoder().decode(buf), "3456");
    const tail = new Uint8Array(6);
    assert.equal(readAtSync(f, 7, tail), 3, "a short count at end of file, not a throw");
    assert.equal(new TextDecoder().decode(tail.subarray(0, 3)), "789");
  } finally {
    Deno.removeSync(path);
  }
});

Deno.test("readWholeFileSync: the whole file, empty or larger than a read", () => {
  const dir = Deno.makeTempDirSync({ prefix: "at-read-whole-" });
  try {
    Deno.writeFileSync(`${dir}/empty`, new Uint8Array(0));
    assert.equal(readWholeFileSync(`${dir}/empty`).length, 0);
    const big = new Uint8Array(3 * 1024 * 1024 + 7).map((_, i) => i % 251);
    Deno.writeFileSync(`${dir}/big`, big);
    assert.deepEqual(readWholeFileSync(`${dir}/big`), big);
    assert.throws(() => readWholeFileSync(`${dir}/absent`), Deno.errors.NotFound);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("readWholeFileSync: grows past a stat size of 0 (/proc)", () => {
  // /proc files report size 0 and still have content: the buffer must grow past the stat.
  const bytes = readWholeFileSync("/proc/self/status");
  assert.ok(bytes.length > 100);
  assert.match(new TextDecoder().decode(bytes), /^Name:/);
});
