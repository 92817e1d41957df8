import assert from "node:assert/strict";
import { readAtSync } from "../../lib/fs/read_at.ts";

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
