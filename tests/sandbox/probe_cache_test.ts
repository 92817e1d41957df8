/**
 * The sandbox probe's answer kept between runs (`lib/sandbox/probe_cache.ts`): asked once per
 * host identity and hour; a failed probe is never kept; another identity, another key, an edited
 * answer, an old one or garbage probes again; and, live, the kept answer is this host's probe.
 */
import assert from "node:assert/strict";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { cachedProbe, PROBE_CACHE_TTL_MS, probeIdentity } from "../../lib/sandbox/probe_cache.ts";
import { type ProbeResult, probeSandbox } from "../../lib/sandbox/host_probe.ts";

const KEY = new HmacKey(new TextEncoder().encode("probe-cache-key"));
const OK: ProbeResult = {
  ok: true,
  backend: "bwrap",
  program: "/usr/bin/bwrap",
  host: { bwrap: { disableUserns: true, bindFd: true }, landlock: { abi: 4, reason: null } },
};

function counting(result: ProbeResult): { probe: () => Promise<ProbeResult>; count: () => number } {
  let n = 0;
  return { probe: () => (n++, Promise.resolve(result)), count: () => n };
}

Deno.test("probe cache: a working answer is asked once for one identity within the hour, and comes back as it was", async () => {
  const path = `${Deno.makeTempDirSync()}/probe.cache`;
  const c = counting(OK);
  const t0 = 1_800_000_000_000;
  assert.deepEqual(await cachedProbe(path, KEY, c.probe, () => "h1", () => t0), OK);
  assert.deepEqual(await cachedProbe(path, KEY, c.probe, () => "h1", () => t0 + 60_000), OK);
  assert.equal(c.count(), 1);
  assert.equal((Deno.statSync(path).mode ?? 0) & 0o777, 0o600);
  // Another identity (bwrap upgraded, a reboot), or an answer an hour old: probed again.
  await cachedProbe(path, KEY, c.probe, () => "h2", () => t0 + 60_000);
  assert.equal(c.count(), 2);
  await cachedProbe(path, KEY, c.probe, () => "h2", () => t0 + 60_000 + PROBE_CACHE_TTL_MS);
  assert.equal(c.count(), 3);
});

Deno.test("probe cache: a failed probe is never kept; another key, an edited answer or garbage probes again", async () => {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/probe.cache`;
  const failed = counting({ ok: false, backend: "bwrap", program: "/usr/bin/bwrap", reason: "no" });
  await cachedProbe(path, KEY, failed.probe, () => "h");
  await cachedProbe(path, KEY, failed.probe, () => "h");
  assert.equal(failed.count(), 2);
  assert.equal([...Deno.readDirSync(dir)].length, 0, "nothing written");
  const c = counting(OK);
  await cachedProbe(path, KEY, c.probe, () => "h");
  await cachedProbe(path, new HmacKey(new Uint8Array([7])), c.probe, () => "h");
  assert.equal(c.count(), 2, "another key's reader does not trust it");
  // The attacker's edit: Landlock said absent, so no exec allowlist would be asked for.
  const text = Deno.readTextFileSync(path);
  const edited = text.replace('"abi":4', '"abi":0');
  assert.notEqual(edited, text);
  Deno.writeTextFileSync(path, edited);
  await cachedProbe(path, KEY, c.probe, () => "h");
  assert.equal(c.count(), 3);
  Deno.writeTextFileSync(path, "garbage");
  await cachedProbe(path, KEY, c.probe, () => "h");
  assert.equal(c.count(), 4);
});

Deno.test({
  name: "probe cache, live: the kept answer is this host's probe, under this host's identity",
  ignore: Deno.build.os !== "linux",
}, async () => {
  const path = `${Deno.makeTempDirSync()}/probe.cache`;
  const live = await probeSandbox();
  assert.equal(live.ok, true, live.ok ? "" : live.reason);
  const first = await cachedProbe(path, KEY, probeSandbox);
  const kept = await cachedProbe(path, KEY, () => Promise.reject(new Error("probed again")));
  assert.deepEqual(kept, first);
  assert.deepEqual(kept, live);
  assert.equal(probeIdentity(), probeIdentity(), "the identity is stable");
});
