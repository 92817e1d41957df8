/**
 * The readfs containment rule as a property: whatever string an agent passes as a path, and
 * whatever links the tree holds, `resolveIn` either refuses it with one of its codes or returns
 * a real path inside the root, outside the control plane and the key dir. The tree holds links
 * out of the root, into the control plane, and within it.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { AgentTeamsError } from "../../lib/errors.ts";
import { within } from "../../lib/fs/within.ts";
import { FsSafetyError } from "../../lib/errors.ts";
import {
  openRoot,
  readHeld,
  reservedProblem,
  resolveIn,
  SETTLE_MS,
  toolRel,
} from "../../lib/mcp/read_root.ts";
import { fileTempDir } from "../_helpers/mod.ts";

const CODES = new Set([
  "PATH_INVALID",
  "PATH_OUTSIDE_PROJECT",
  "CONTROL_PLANE",
  "KEY_DIR",
  "NOT_FOUND",
]);

function tree(): { root: string; keys: string } {
  const base = fileTempDir("read-root");
  const root = `${base}/p`;
  for (const d of ["src/sub", ".agentteams", ".git", "keys", "references"]) {
    Deno.mkdirSync(`${root}/${d}`, { recursive: true });
  }
  Deno.mkdirSync(`${base}/out`);
  Deno.writeTextFileSync(`${base}/out/x`, "x");
  Deno.writeTextFileSync(`${root}/src/a`, "a");
  Deno.writeTextFileSync(`${root}/keys/k`, "k");
  Deno.symlinkSync(`${base}/out`, `${root}/src/out`);
  Deno.symlinkSync("../../.agentteams", `${root}/src/sub/cp`);
  Deno.symlinkSync("../a", `${root}/src/sub/up`);
  Deno.symlinkSync("/", `${root}/slash`);
  Deno.symlinkSync("keys", `${root}/kl`);
  return { root, keys: `${root}/keys` };
}

Deno.test("resolveIn: any argument is refused with a known code or lands inside, off the plane", () => {
  const { root, keys } = tree();
  const r = openRoot(root, keys);
  const seg = fc.constantFrom(
    "src",
    "sub",
    "a",
    "out",
    "x",
    "cp",
    "up",
    "slash",
    "kl",
    "keys",
    "k",
    ".agentteams",
    ".AgentTeams",
    ".git",
    "references",
    "..",
    ".",
    "",
    "~",
    "etc",
    "\0",
    "A",
    "src\\a",
  );
  fc.assert(
    fc.property(fc.array(seg, { maxLength: 8 }), fc.boolean(), (segs, lead) => {
      const arg = (lead ? "/" : "") + segs.join("/");
      try {
        const got = resolveIn(r, arg);
        assert.ok(within(got.abs, r.real), `${arg} -> ${got.abs}`);
        assert.equal(reservedProblem(r, got.rel, got.abs), null, `${arg} -> ${got.rel}`);
        assert.equal(Deno.realPathSync(got.abs), got.abs);
      } catch (e) {
        assert.ok(e instanceof AgentTeamsError && CODES.has(e.code), `${arg}: ${e}`);
      }
    }),
    { numRuns: 2000 },
  );
});

Deno.test("toolRel: lenient spellings normalize, the rest are refused", () => {
  assert.equal(toolRel(""), ".");
  assert.equal(toolRel("."), ".");
  assert.equal(toolRel("./src//a/"), "src/a");
  for (const bad of ["..", "a/../b", "/a", "~/a", "./~/a", "a\0b", "a\\b", "a\u202eb"]) {
    assert.throws(() => toolRel(bad), (e: unknown) => e instanceof AgentTeamsError, bad);
  }
});

Deno.test("readHeld: a folder changed just now is waited for; one that keeps changing is FILE_CHANGED", async () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync());
  try {
    Deno.mkdirSync(`${dir}/src`);
    Deno.writeTextFileSync(`${dir}/src/a.txt`, "x");
    const root = openRoot(dir, null);
    const r = resolveIn(root, "src/a.txt");
    // Just made: src and the root changed now. The look waits until they settle, then counts.
    let looks = 0;
    const bytes = await readHeld(root, r, (abs) => (looks++, Deno.readFileSync(abs)));
    assert.equal(new TextDecoder().decode(bytes), "x");
    assert.equal(looks, 1, "a look was made before the folders had settled");
    // A folder on the path changed during every look: never counted.
    await new Promise((done) => setTimeout(done, 1000 + SETTLE_MS * 2));
    let n = 0;
    const changing = await readHeld(root, r, (abs) => {
      Deno.writeTextFileSync(`${dir}/src/other-${n++}`, "");
      return Deno.readFileSync(abs);
    }).catch((e) => e);
    assert.ok(changing instanceof FsSafetyError, String(changing));
    assert.equal(changing.code, "FILE_CHANGED");
    assert.ok(n >= 1 && n <= 3, `${n} looks`);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
