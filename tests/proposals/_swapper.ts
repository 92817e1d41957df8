/**
 * The race harness of `race_slow_test.ts`: swaps two names atomically with `renameat2(2)` and
 * `RENAME_EXCHANGE`, so one name is always present and flips between a real directory and a
 * symlink with no window in which it is missing.
 *
 * `deno run --allow-ffi swapper.ts A B loop`: swaps until SIGTERM, then leaves A as it started
 * (an even number of swaps) and prints `{"swaps": N}`. `... A B once`: one swap.
 *
 * This is test harness code (a swapping adversary), not part of agentteams.
 *
 * @module
 */

const RENAME_EXCHANGE = 2;
const AT_FDCWD = -100;

const libc = Deno.dlopen("libc.so.6", {
  renameat2: { parameters: ["i32", "buffer", "i32", "buffer", "u32"], result: "i32" },
});

function cstr(s: string): Uint8Array<ArrayBuffer> {
  const b = new TextEncoder().encode(s);
  const out = new Uint8Array(b.length + 1);
  out.set(b);
  return out;
}

const [a, b, mode] = Deno.args;
if (a === undefined || b === undefined || (mode !== "loop" && mode !== "once")) {
  console.error("usage: swapper.ts A B loop|once");
  Deno.exit(2);
}
const pa = cstr(a);
const pb = cstr(b);

function swap(): void {
  const r = libc.symbols.renameat2(AT_FDCWD, pa, AT_FDCWD, pb, RENAME_EXCHANGE);
  if (r !== 0) throw new Error(`renameat2(${a}, ${b}, RENAME_EXCHANGE) failed`);
}

if (mode === "once") {
  swap();
  console.log(JSON.stringify({ swaps: 1 }));
} else {
  let stop = false;
  Deno.addSignalListener("SIGTERM", () => {
    stop = true;
  });
  let swaps = 0;
  console.log("ready");
  while (!stop) {
    // Bursts of swaps, then a short pause so the signal can be seen and the CPU shared.
    for (let i = 0; i < 200; i++) {
      swap();
      swaps++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  if (swaps % 2 === 1) {
    swap();
    swaps++;
  }
  console.log(JSON.stringify({ swaps }));
}
libc.close();
