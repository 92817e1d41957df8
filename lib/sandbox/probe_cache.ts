/**
 * The sandbox probe's answer kept between runs, so a confined run does not start three processes
 * (`bwrap --help`, perl's Landlock probe, a probe sandbox) to learn what the last one learnt.
 *
 * Only a working probe is kept, and only for the host it was made on: the answer is tied to an
 * identity of what decides it (bwrap's and perl's files: device, inode, size, mtime, ctime; the
 * kernel's release and this boot's id; the user-namespace switches under `/proc/sys`; the user),
 * and to at most {@link PROBE_CACHE_TTL_MS} of age. Anything else (an upgraded bwrap, a reboot,
 * user namespaces switched off) probes again. A failed probe is never kept, so a host that is
 * fixed works at once. The file is signed with the ledger key (`signed_cache.ts`); one that does
 * not verify is no cache. A kept answer that went stale without its identity changing would make
 * bwrap refuse to start: the command then does not run (never unconfined).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cachedProbe } from "./probe_cache.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([1]));
 * const path = Deno.makeTempDirSync() + "/probe";
 * let probes = 0;
 * const probe = () => (probes++, Promise.resolve({ ok: true, backend: "bwrap", program: "/usr/bin/bwrap" } as const));
 * await cachedProbe(path, k, probe, () => "host-1");
 * await cachedProbe(path, k, probe, () => "host-1");
 * assert.equal(probes, 1);
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { BWRAP_PATH, PERL_PATH } from "../host/programs.ts";
import type { ProbeResult, SandboxHost } from "./host_probe.ts";
import { readSignedCache, writeSignedCache } from "./signed_cache.ts";

const MAC_PREFIX = "agentteams sandbox probe cache v1\n";
/** How long a kept probe answer is used (ms). */
export const PROBE_CACHE_TTL_MS = 3600_000;

/**
 * Where the probe cache lives under the runs' temporary parent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeCachePath } from "./probe_cache.ts";
 * assert.equal(probeCachePath("/tmp/agentteams-1000"), "/tmp/agentteams-1000/agentteams-probe.cache");
 * ```
 */
export function probeCachePath(tmpParent: string): string {
  return `${tmpParent}/agentteams-probe.cache`;
}

function statId(path: string): string {
  try {
    const st = Deno.statSync(path);
    return `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}`;
  } catch {
    return "missing";
  }
}

function readProc(path: string): string {
  try {
    return Deno.readTextFileSync(path).trim();
  } catch {
    return "-";
  }
}

/**
 * What decides this host's probe answer, as one string (see the module doc). I/O: `stat`s and
 * small reads under `/proc`, no process.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeIdentity } from "./probe_cache.ts";
 * const id = JSON.parse(probeIdentity());
 * assert.equal(id[0], Deno.build.os); // then the arch, the kernel release, ...
 * assert.equal(probeIdentity(), probeIdentity()); // the same host, the same identity
 * ```
 */
export function probeIdentity(): string {
  return JSON.stringify([
    Deno.build.os,
    Deno.build.arch,
    readProc("/proc/sys/kernel/osrelease"),
    readProc("/proc/sys/kernel/random/boot_id"),
    readProc("/proc/sys/kernel/unprivileged_userns_clone"),
    readProc("/proc/sys/user/max_user_namespaces"),
    readProc("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
    Deno.uid(),
    statId(BWRAP_PATH),
    statId(PERL_PATH),
  ]);
}

function isHost(v: unknown): v is SandboxHost {
  if (typeof v !== "object" || v === null) return false;
  const h = v as Record<string, Record<string, unknown> | undefined>;
  return typeof h.bwrap?.disableUserns === "boolean" && typeof h.bwrap?.bindFd === "boolean" &&
    typeof h.landlock?.abi === "number" &&
    (h.landlock?.reason === null || typeof h.landlock?.reason === "string");
}

/**
 * The probe's answer: the kept one when this key signed it for this host's identity within the
 * last {@link PROBE_CACHE_TTL_MS}, else `probe()`'s, kept when it worked.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cachedProbe } from "./probe_cache.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const fail = () => Promise.resolve({ ok: false, backend: null, program: null, reason: "none" } as const);
 * const r = await cachedProbe(Deno.makeTempDirSync() + "/p", new HmacKey(new Uint8Array([1])), fail, () => "h");
 * assert.equal(r.ok, false); // not kept
 * ```
 */
export async function cachedProbe(
  path: string,
  hmac: HmacKey,
  probe: () => Promise<ProbeResult>,
  identity: () => string = probeIdentity,
  now: () => number = Date.now,
): Promise<ProbeResult> {
  const id = identity();
  const body = await readSignedCache(path, hmac, MAC_PREFIX, 64 * 1024);
  if (body !== null) {
    try {
      const v = JSON.parse(body);
      const age = now() - v.at;
      if (
        v.identity === id && typeof v.at === "number" && age >= 0 && age < PROBE_CACHE_TTL_MS &&
        (v.backend === "bwrap" || v.backend === "seatbelt") && typeof v.program === "string" &&
        (v.host === null || isHost(v.host))
      ) {
        return {
          ok: true,
          backend: v.backend,
          program: v.program,
          ...(v.host === null ? {} : { host: v.host }),
        };
      }
    } catch {
      // Not a cache: probe.
    }
  }
  const r = await probe();
  if (r.ok) {
    writeSignedCache(
      path,
      hmac,
      MAC_PREFIX,
      JSON.stringify({
        identity: id,
        at: now(),
        backend: r.backend,
        program: r.program,
        host: r.host ?? null,
      }),
    );
  }
  return r;
}
