/**
 * Fixtures of the authz tests: a project with a roster, independent signatures (node:crypto's
 * HMAC, not the code under test), Ed25519 signers, and the vectors in tests/testdata/authz.
 *
 * @module
 */
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";
import { generatePem, importPrivatePem } from "../../lib/crypto/ed25519.ts";
import type { OperatorSigner } from "../../lib/authz/signed.ts";
import type { GrantFields } from "../../lib/authz/grants.ts";

/** The vectors' directory. */
export const VECTORS = join(REPO_ROOT, "tests", "testdata", "authz");
/** The keys the vectors were signed with (tests/testdata/authz/KEYS.txt). */
export const VECTOR_KEYS = {
  waiver: "waiver-test-key",
  decision: "decision-test-key",
  grant: "grant-test-key",
};

/** Hex HMAC-SHA256, computed by node:crypto. */
export function mac(key: string, text: string): string {
  return createHmac("sha256", key).update(text).digest("hex");
}

/** The earlier tool's payload: each value stripped, joined with `|`. */
export function pipe(values: string[]): string {
  return values.map((v) => v.trim()).join("|");
}

/** A project dir with `references/` and, when given, a roster. */
export async function project(dir: string, roster?: string): Promise<string> {
  const p = join(dir, "project");
  await Deno.mkdir(join(p, "references"), { recursive: true });
  if (roster !== undefined) {
    await Deno.writeTextFile(join(p, "references", "security-approvers.txt"), roster);
  }
  return p;
}

/** A fresh Ed25519 signer, its public key installed in `<root>/references/authorized-verify-keys`. */
export async function installedSigner(root: string, keyId?: string): Promise<OperatorSigner> {
  const pair = await generatePem();
  const id = keyId ?? pair.keyId;
  const store = join(root, "references", "authorized-verify-keys");
  await Deno.mkdir(store, { recursive: true });
  await Deno.writeTextFile(join(store, `${id}.pub.pem`), pair.publicPem);
  return { key: await importPrivatePem(pair.privatePem), keyId: id, publicPem: pair.publicPem };
}

/** A grant's business fields as `appendGrant` takes them: an Ed25519 write grant by default. */
export function grantFields(f: Partial<GrantFields> = {}): GrantFields {
  return {
    grantId: "G-1",
    issuerTeam: "team-a",
    holderTeam: "team-b",
    targetPath: "docs/shared",
    permittedOps: "write",
    expiresAt: "2026-12-31T00:00:00Z",
    maxUses: 1,
    approver: "alice",
    ticketId: "T",
    reasonCode: "r",
    issuerRoot: "/srv/team-a",
    ...f,
  };
}

/** What a `waiver issue` through the CLI names (the expiry is 2099-01-01T00:00:00Z). */
export interface WaiverArgs {
  /** `--id`. */
  readonly id: string;
  /** `--action`. */
  readonly action: string;
  /** `--max-uses`. */
  readonly maxUses: number;
  /** `--approver` (default `security`). */
  readonly approver?: string;
  /** `--ticket`. */
  readonly ticket: string;
  /** `--reason`. */
  readonly reason: string;
}

/** The argv of `waiver issue --project <project> ...`. */
export function waiverIssueArgs(project: string, w: WaiverArgs): string[] {
  return [
    "waiver",
    "issue",
    "--project",
    project,
    "--id",
    w.id,
    "--action",
    w.action,
    "--expires",
    "2099-01-01T00:00:00Z",
    "--max-uses",
    String(w.maxUses),
    "--approver",
    w.approver ?? "security",
    "--ticket",
    w.ticket,
    "--reason",
    w.reason,
  ];
}

/**
 * The business-field flags of `grant sign|issue` (everything but `--id` and `--ops`): team-a
 * grants `holder` its `target` under `issuerRoot`, one use, expiring 2099-01-01T00:00:00Z, approved
 * by alice.
 */
export function grantFieldArgs(
  target: string,
  issuerRoot: string,
  holder = "team-b",
): string[] {
  return [
    "--issuer-team",
    "team-a",
    "--holder-team",
    holder,
    "--target",
    target,
    "--expires",
    "2099-01-01T00:00:00Z",
    "--max-uses",
    "1",
    "--approver",
    "alice",
    "--ticket",
    "T-1",
    "--reason",
    "cross-repo",
    "--issuer-root",
    issuerRoot,
  ];
}

/** The argv of `decision sign --project <project> --action <action> --verdict <verdict>`. */
export function decisionSignArgs(project: string, action: string, verdict: string): string[] {
  return ["decision", "sign", "--project", project, "--action", action, "--verdict", verdict];
}
