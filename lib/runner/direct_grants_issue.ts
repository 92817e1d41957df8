/**
 * The operator's side of direct-write grants: signing one into the grants file
 * (`agentteams mcp grant issue`) and listing what the file holds with each record's verdict
 * against the brief as it is now (`agentteams mcp grant list`). Both run outside every agent
 * session, as the operator: the grants file and the verify keys live under the operator's home
 * (`direct_grants_load.ts`), never in the project.
 *
 * `issue` binds what a runner will verify: the brief's `mcp_grants.<agent>` tools (which must ask
 * for `approval: "direct"`), the agent's write scopes (given again with `--scope`, which must be
 * exactly the brief's: the operator signs what they read), every gate's definition, this build's
 * runner server. It puts the signer's public key in the verify-key folder when it is not there,
 * refuses a key id that names another key there, and writes the file only when the new grant
 * would be active (the 3-grant cap, one grant per agent: `--replace` drops the agent's others).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project and the operator's key, which it declares rather than makes.
 * import { issueDirectGrant } from "./direct_grants_issue.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy; // mcp_grants.worker asks for approval "direct"
 * declare const privatePem: string; // the operator's Ed25519 key (PKCS#8 PEM)
 * const r = await issueDirectGrant({ root: "/work/p", home: "/home/op", policy, agent: "worker",
 *   scopes: ["src/"], privatePem, days: 7, maxWrites: 20, now: new Date() });
 * r.file; // "/home/op/.config/agentteams/mcp-grants/p-<12 hex>.json"
 * ```
 * @module
 */
import {
  derToPem,
  importPrivatePem,
  importPublicPem,
  keyIdOf,
  pemToDer,
  signHex,
  verifyHex,
} from "../crypto/ed25519.ts";
import { QueueError, UsageError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { custodyProblem } from "../fs/safe_read.ts";
import { canonical, compareCodePoints, type JsonValue } from "../pycompat/canonical.ts";
import type { Policy } from "../policy/types.ts";
import {
  activeGrants,
  DIRECT_KEY_ID_RE,
  expectedBinding,
  GrantProblem,
  MAX_DAYS,
  MAX_WRITES,
  signedPayloadOf,
  verifyGrant,
} from "./direct_grants.ts";
import {
  directGrantPaths,
  OperatorKeys,
  readGrantsFile,
  runnerIdentity,
  verifyContext,
} from "./direct_grants_load.ts";

/** Inputs of {@link issueDirectGrant}. */
export interface IssueDirectGrantOptions {
  readonly root: string;
  readonly home: string;
  readonly policy: Policy;
  readonly agent: string;
  /** The write scopes the operator means to grant: exactly the agent's in the brief. */
  readonly scopes: readonly string[];
  /** The operator's Ed25519 private key (PKCS#8 PEM). */
  readonly privatePem: string;
  /** Days from now to expiry (1 to 30). */
  readonly days: number;
  /** Direct writes allowed (1 to 500). */
  readonly maxWrites: number;
  /** The grant id (default `MG-` and 12 random hex). */
  readonly grantId?: string;
  /** The verify key's id (default the key's own id: 16 hex of its SPKI's SHA-256). */
  readonly keyId?: string;
  /** Drop the agent's other records from the file. */
  readonly replace?: boolean;
  readonly now: Date;
}

/** What {@link issueDirectGrant} wrote. */
export interface IssuedDirectGrant {
  readonly record: Record<string, JsonValue>;
  /** The grants file written. */
  readonly file: string;
  /** The verify key file, and whether it was written now. */
  readonly verifyKey: { readonly path: string; readonly written: boolean };
  /** Grant ids dropped (`replace`). */
  readonly replaced: readonly string[];
}

function usage(message: string): UsageError {
  return new UsageError("USAGE", message);
}

/** The public key PEM and key id of a PKCS#8 Ed25519 private key. */
async function publicOf(privatePem: string): Promise<{ pem: string; keyId: string }> {
  const extractable = await crypto.subtle.importKey(
    "pkcs8",
    pemToDer(privatePem, "PRIVATE KEY") as BufferSource,
    { name: "Ed25519" },
    true,
    ["sign"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", extractable);
  const pub = await crypto.subtle.importKey(
    "jwk",
    { kty: "OKP", crv: "Ed25519", x: jwk.x },
    { name: "Ed25519" },
    true,
    ["verify"],
  );
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pub));
  return { pem: derToPem(spki, "PUBLIC KEY"), keyId: keyIdOf(spki) };
}

/** `YYYY-MM-DDTHH:MM:SS+00:00`, as Python's `isoformat(timespec="seconds")` writes UTC. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + "+00:00";
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = [...new Set(a)].sort(compareCodePoints);
  const y = [...new Set(b)].sort(compareCodePoints);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/**
 * Signs a direct-write grant and writes it into the operator's grants file (see the module doc).
 *
 * @throws {UsageError} `USAGE` for limits out of range, scopes that are not the brief's, a key
 *   id that names another key; {@link QueueError} `DIRECT_GRANT_INVALID` when the brief allows
 *   the agent no grant or the new grant would not be active, `DIRECT_GRANTS_UNSAFE` for a
 *   grants file or verify key out of custody
 * @example
 * ```ts ignore
 * // Not run: it needs a project and the operator's key, which it declares rather than makes.
 * import { issueDirectGrant, type IssueDirectGrantOptions } from "./direct_grants_issue.ts";
 * declare const opts: IssueDirectGrantOptions;
 * (await issueDirectGrant(opts)).record.grant_id; // "MG-<12 hex>"
 * ```
 */
export async function issueDirectGrant(opts: IssueDirectGrantOptions): Promise<IssuedDirectGrant> {
  if (!Number.isInteger(opts.days) || opts.days < 1 || opts.days > MAX_DAYS) {
    throw usage(`--days must be a whole number from 1 to ${MAX_DAYS}, got ${opts.days}`);
  }
  if (!Number.isInteger(opts.maxWrites) || opts.maxWrites < 1 || opts.maxWrites > MAX_WRITES) {
    throw usage(
      `--max-writes must be a whole number from 1 to ${MAX_WRITES}, got ${opts.maxWrites}`,
    );
  }
  const server = runnerIdentity();
  const binding = expectedBinding(opts.policy, opts.agent, server);
  if (typeof binding === "string") {
    throw new QueueError("DIRECT_GRANT_INVALID", `no direct grant for ${opts.agent}: ${binding}`);
  }
  if (!sameSet(opts.scopes, binding.write_scopes)) {
    throw usage(
      `--scope must name exactly agent ${opts.agent}'s write scopes in the brief ` +
        `(${binding.write_scopes.join(", ")}); got ${opts.scopes.join(", ") || "none"}`,
    );
  }
  const signing = await importPrivatePem(opts.privatePem);
  const pub = await publicOf(opts.privatePem);
  const keyId = opts.keyId ?? pub.keyId;
  if (!DIRECT_KEY_ID_RE.test(keyId)) {
    throw usage(`--key-id ${JSON.stringify(keyId)} is not [A-Za-z0-9][A-Za-z0-9._-]{0,63}`);
  }
  const projectReal = Deno.realPathSync(opts.root);
  const paths = directGrantPaths(projectReal, opts.home);
  const keys = new OperatorKeys(paths.keys, { projectReal });
  const keyPath = keys.path(keyId);
  const grantId = opts.grantId ?? `MG-${crypto.getRandomValues(new Uint8Array(6)).toHex()}`;
  const now = opts.now.getTime();
  const fields: Record<string, JsonValue> = {
    grant_id: grantId,
    agent: opts.agent,
    server: binding.server,
    map_version: binding.map_version,
    tools: binding.tools,
    approval: "direct",
    write_scopes: binding.write_scopes,
    gates: binding.gates,
    server_sha256: binding.server_sha256,
    issued: isoSeconds(now),
    expires: isoSeconds(now + opts.days * 86_400_000),
    max_writes: opts.maxWrites,
    key_id: keyId,
  };
  const record: Record<string, JsonValue> = {
    ...fields,
    signature: await signHex(signing, signedPayloadOf(fields)),
  };

  // The file as it is (custody checked), the agent's others dropped when asked.
  const existing = readGrantsFile(paths.file, { projectReal })?.records ?? [];
  const replaced = opts.replace === true
    ? existing.filter((r) => r.agent === opts.agent).map((r) => String(r.grant_id))
    : [];
  const kept = opts.replace === true ? existing.filter((r) => r.agent !== opts.agent) : existing;
  if (kept.some((r) => r.grant_id === grantId)) {
    throw usage(`the grants file already holds a grant ${grantId}; give another --id`);
  }
  const records = [...kept, record];

  // The verify key the runner will read: the signer's, or refused when the id names another.
  const present = keys.pem(keyId);
  if (present instanceof Error) throw present;
  if (present !== null) {
    if (
      !await verifyHex(
        await importPublicPem(present),
        String(record.signature),
        signedPayloadOf(fields),
      )
    ) {
      throw usage(
        `${keyPath} holds another key than the one given: give another --key-id, or the key ` +
          "whose public half that is",
      );
    }
  }

  // The new grant must be active among the file's records, as a runner started now finds them.
  const found = await activeGrants(records, {
    ...verifyContext(opts.policy, opts.now, keys),
    keyFor: (id) => id === keyId ? importPublicPem(pub.pem) : keys.key(id),
  });
  if (found.byAgent.get(opts.agent)?.grant_id !== grantId) {
    throw new QueueError(
      "DIRECT_GRANT_INVALID",
      `grant ${grantId} would not be active, so nothing was written: ` +
        found.problems.join("; ") +
        (replaced.length === 0 && existing.some((r) => r.agent === opts.agent)
          ? ` (the file already holds a grant for ${opts.agent}: --replace drops it)`
          : ""),
    );
  }

  // Each folder made 0700, or, when it is there, one the runner will accept (checked before
  // anything is written: a grant the runner then refuses to read is not written).
  const uid = Deno.uid() ?? undefined;
  for (const dir of [paths.file.slice(0, paths.file.lastIndexOf("/")), paths.keys]) {
    const st = lstatOrNullSync(dir);
    const problem = st === null
      ? null
      : custodyProblem(st, { kind: "directory", uid, forbiddenModeBits: 0o077 });
    if (problem !== null) {
      throw new QueueError(
        "DIRECT_GRANTS_UNSAFE",
        `${dir} ${problem.why}; the runner would refuse it: make it the operator's own 0700 ` +
          "folder, then issue again (nothing was written)",
      );
    }
  }
  for (const dir of [paths.file.slice(0, paths.file.lastIndexOf("/")), paths.keys]) {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  let wroteKey = false;
  if (present === null) {
    atomicWriteFileSync(keyPath, pub.pem, { forceMode: 0o600 });
    wroteKey = true;
  }
  atomicWriteFileSync(paths.file, JSON.stringify(records, null, 2) + "\n", { forceMode: 0o600 });
  return { record, file: paths.file, verifyKey: { path: keyPath, written: wroteKey }, replaced };
}

/** One record of the grants file, as {@link listDirectGrants} reports it. */
export interface ListedGrant {
  readonly grant_id: JsonValue;
  readonly agent: JsonValue;
  readonly expires: JsonValue;
  readonly max_writes: JsonValue;
  /** `null` when it verifies now against the brief; else why not (code: words). */
  readonly problem: string | null;
}

/**
 * The grants file's records, each with its verdict against the brief as it is now (whether a
 * runner started now would activate it on its own; the 3-grant cap is reported in `problems`).
 *
 * @throws {QueueError} `DIRECT_GRANTS_UNSAFE`, `DIRECT_GRANT_INVALID` (a malformed file)
 * @example
 * ```ts ignore
 * // Not run: it needs a policy, which it declares rather than makes.
 * import { listDirectGrants } from "./direct_grants_issue.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy;
 * (await listDirectGrants({ root: "/work/p", home: "/home/op", policy, now: new Date() })).grants;
 * ```
 */
export async function listDirectGrants(
  opts: { root: string; home: string; policy: Policy; now: Date },
): Promise<{ file: string; grants: ListedGrant[]; problems: string[] }> {
  const projectReal = Deno.realPathSync(opts.root);
  const paths = directGrantPaths(projectReal, opts.home);
  const file = readGrantsFile(paths.file, { projectReal });
  const records = file?.records ?? [];
  const keys = new OperatorKeys(paths.keys, { projectReal });
  const ctx = verifyContext(opts.policy, opts.now, keys);
  const grants: ListedGrant[] = [];
  for (const r of records) {
    let problem: string | null = null;
    try {
      await verifyGrant(r, ctx);
    } catch (e) {
      if (!(e instanceof GrantProblem)) throw e;
      problem = `${e.code}: ${e.message}`;
    }
    const v = (k: string): JsonValue => {
      const x = r[k];
      try {
        canonical(x);
        return x as JsonValue;
      } catch {
        return null;
      }
    };
    grants.push({
      grant_id: v("grant_id"),
      agent: v("agent"),
      expires: v("expires"),
      max_writes: v("max_writes"),
      problem,
    });
  }
  const found = await activeGrants(records, ctx);
  const cap = found.problems.filter((p) => !grants.some((g) => g.problem === p));
  return { file: paths.file, grants, problems: cap };
}
