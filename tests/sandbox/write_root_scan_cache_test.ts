/**
 * The write roots' scan cache between runs (`lib/sandbox/write_root_scan_cache.ts`): a cache this
 * key did not sign, one made with another matcher, one that is not a regular file or not the
 * tool's format is no cache (the walk lists everything); an unchanged record is not rewritten;
 * and, live, a `.git` planted in a write root between two confined runs is kept read-only by the
 * second run's plan though the first run's cache said the directory had none.
 */
import assert from "node:assert/strict";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { ScanCache, scanCachePath } from "../../lib/sandbox/write_root_scan_cache.ts";
import {
  readOnlyMatcher,
  SCAN_SETTLE_MS,
  scanMatcherContext,
  type ScanRecord,
  scanWritableRoots,
} from "../../lib/sandbox/write_root_scan.ts";
import { prepareConfinement } from "../../lib/sandbox/mounts_io.ts";

const KEY = new HmacKey(new TextEncoder().encode("scan-cache-key"));
const CTX = scanMatcherContext("/p", [], false);
const RECORD: ScanRecord = new Map([
  ["/p/src", { id: "true 1 2 3 4", at: 5, descended: ["/p/src/a"], hits: [] }],
  ["/p/src/a", {
    id: "true 1 3 3 4",
    at: 5,
    descended: [],
    hits: [{ path: "/p/src/a/.git", kind: "dir" }],
  }],
]);

async function saved(path: string, record: ScanRecord = RECORD, key = KEY): Promise<void> {
  const c = await ScanCache.open(path, key);
  c.load(CTX);
  c.save(record);
}

Deno.test("scan cache: what this key signed for this matcher comes back as it was saved", async () => {
  const path = `${Deno.makeTempDirSync()}/scan.cache`;
  await saved(path);
  assert.deepEqual((await ScanCache.open(path, KEY)).load(CTX), RECORD);
  assert.equal((Deno.statSync(path).mode ?? 0) & 0o777, 0o600);
  assert.match(scanCachePath("/tmp/x", "/p"), /^\/tmp\/x\/agentteams-scan-[0-9a-f]{16}\.cache$/);
});

Deno.test("scan cache: another key, another matcher, an edited body, a symlink, a FIFO or garbage is no cache", async () => {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/scan.cache`;
  await saved(path);
  assert.equal((await ScanCache.open(path, new HmacKey(new Uint8Array([9])))).load(CTX), null);
  assert.equal(
    (await ScanCache.open(path, KEY)).load(scanMatcherContext("/p", ["*.pem"], false)),
    null,
  );
  const text = Deno.readTextFileSync(path);
  // The attacker's edit: a directory's hit removed (its `.git` would then go unguarded).
  const edited = text.replace(`[["/p/src/a/.git","dir"]]`, "[]");
  assert.notEqual(edited, text);
  Deno.writeTextFileSync(path, edited);
  assert.equal((await ScanCache.open(path, KEY)).load(CTX), null);
  Deno.writeTextFileSync(`${dir}/real`, text);
  Deno.removeSync(path);
  Deno.symlinkSync(`${dir}/real`, path);
  assert.equal((await ScanCache.open(path, KEY)).load(CTX), null, "a symlink is not followed");
  Deno.removeSync(path);
  new Deno.Command("mkfifo", { args: [path] }).outputSync();
  assert.equal((await ScanCache.open(path, KEY)).load(CTX), null, "a FIFO is not waited on");
  Deno.removeSync(path);
  Deno.writeTextFileSync(path, "not a cache");
  assert.equal((await ScanCache.open(path, KEY)).load(CTX), null);
});

Deno.test("scan cache: a record whose every directory came from the loaded one is not written again; the run's TMPDIR is never kept", async () => {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/scan.cache`;
  await saved(path);
  const before = Deno.statSync(path);
  const c = await ScanCache.open(path, KEY);
  const loaded = c.load(CTX) as ScanRecord;
  const tmp = "/tmp/agentteams-run-x";
  c.save(new Map([...loaded, [tmp, { id: "t", at: 1, descended: [], hits: [] }]]), tmp);
  assert.equal(Deno.statSync(path).ino, before.ino, "not replaced");
  c.save(new Map([...loaded, ["/p/src/b", { id: "n", at: 1, descended: [], hits: [] }]]), tmp);
  const again = (await ScanCache.open(path, KEY)).load(CTX) as ScanRecord;
  assert.deepEqual([...again.keys()].sort(), ["/p/src", "/p/src/a", "/p/src/b"]);
});

Deno.test("scan cache, live: a `.git` planted in a write root between two runs is kept read-only by the second plan", async () => {
  const project = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-scan-cache-" }));
  const tmpParent = Deno.makeTempDirSync();
  try {
    for (const d of ["src/a/b", "src/c"]) Deno.mkdirSync(`${project}/${d}`, { recursive: true });
    await new Promise((r) => setTimeout(r, SCAN_SETTLE_MS + 100));
    const cachePath = scanCachePath(tmpParent, project);
    const plan = async () => {
      const cache = await ScanCache.open(cachePath, KEY);
      const tmpdir = Deno.makeTempDirSync({ dir: tmpParent });
      const record: ScanRecord = new Map();
      const p = prepareConfinement({
        project,
        home: tmpParent,
        tmpdir,
        agent: { exec: ["/usr/bin"], write: ["src"] },
        cwd: ".",
        argv: ["/usr/bin/true"],
        env: { PATH: "/usr/bin" },
        network: false,
        protectedPaths: [],
        hiddenDirs: [],
        controlPlane: { git: [] },
        scanRecord: record,
        scanCache: cache,
      });
      cache.save(record, tmpdir);
      return p;
    };
    const first = await plan();
    assert.ok(!first.readOnly.some((r) => r.includes("/.git")), "nothing to guard yet");
    assert.ok(Deno.statSync(cachePath).isFile, "the first plan left its scan");
    Deno.mkdirSync(`${project}/src/a/b/.git/hooks`, { recursive: true });
    const second = await plan();
    assert.ok(
      second.readOnly.includes(`${project}/src/a/b/.git`),
      `the planted .git is bound read-only: ${JSON.stringify(second.readOnly)}`,
    );
    // And the cache a third plan finds says so too.
    const third = await plan();
    assert.ok(third.readOnly.includes(`${project}/src/a/b/.git`));
    assert.deepEqual(
      scanWritableRoots([`${project}/src`], readOnlyMatcher(project, [], false)).map((h) => h.path),
      [`${project}/src/a/b/.git`],
    );
  } finally {
    Deno.removeSync(project, { recursive: true });
    Deno.removeSync(tmpParent, { recursive: true });
  }
});
