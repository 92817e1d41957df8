/**
 * `agentteams mcp grant issue|list`: the operator's direct-write grants for the runner's
 * tool-server channel (lib/runner/direct_grants*.ts). `issue` signs one with the operator's
 * Ed25519 key and writes it into `~/.config/agentteams/mcp-grants/`; `list` shows each record
 * with its verdict against the brief now. Distinct from `grant sign|issue|verify` (the triad's
 * capability grants in `references/`).
 *
 * @module
 */
import { join, resolve } from "../fs/path.ts";
import { keyDir, readKeyFile, SIGNING_KEY_FILE } from "../crypto/keys.ts";
import { homeFrom } from "../env.ts";
import { FsSafetyError, KeyError, UsageError } from "../errors.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { issueDirectGrant, listDirectGrants } from "../runner/direct_grants_issue.ts";
import { SLUG_RE } from "../layout.ts";
import { stringFlag } from "./authz_common.ts";
import { fullPolicy } from "./policy_ctx.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/** A whole-number flag, or its default. */
function intFlag(ctx: Ctx, name: string, fallback: number): number {
  const raw = stringFlag(ctx, name);
  if (raw === null) return fallback;
  if (!/^[0-9]{1,6}$/.test(raw)) {
    throw new UsageError("USAGE", `--${name} must be a whole number, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** The operator's private key: `--key PEM` (not readable by group or others), else the key dir's. */
function privatePemOf(ctx: Ctx): string {
  const flag = stringFlag(ctx, "key");
  const dec = new TextDecoder("utf-8", { fatal: true });
  if (flag === null) {
    return dec.decode(readKeyFile(join(keyDir(ctx.env), SIGNING_KEY_FILE), ctx.env));
  }
  try {
    return dec.decode(
      readRegularFileSync(resolve(flag), {
        maxBytes: 64 * 1024,
        ownerUid: Deno.uid() ?? undefined,
        forbiddenModeBits: 0o077,
        what: "signing key",
      }).bytes,
    );
  } catch (e) {
    if (e instanceof FsSafetyError) throw new KeyError("KEY_CUSTODY", e.message);
    if (e instanceof Deno.errors.NotFound) {
      throw new KeyError("NO_KEY", `no signing key at ${flag} (--key names a PKCS#8 PEM file)`);
    }
    throw e;
  }
}

/**
 * Runs `mcp grant issue`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { mcpGrantIssue } from "./mcp_grant_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams mcp grant issue --agent worker --scope src/ --max-writes 20`
 * (await mcpGrantIssue(ctx)).json?.grant_id; // "MG-<12 hex>"
 * ```
 */
export async function mcpGrantIssue(ctx: Ctx): Promise<Outcome> {
  const agent = ctx.parsed.flags.agent;
  if (typeof agent !== "string" || !SLUG_RE.test(agent)) {
    throw new UsageError(
      "USAGE",
      `mcp grant issue needs --agent SLUG, the agent the grant is for (got ${
        JSON.stringify(agent ?? null)
      })`,
    );
  }
  const scopeFlag = ctx.parsed.flags.scope;
  const scopes = Array.isArray(scopeFlag)
    ? scopeFlag
    : typeof scopeFlag === "string"
    ? [scopeFlag]
    : [];
  const policy = await fullPolicy(ctx);
  const r = await issueDirectGrant({
    root: ctx.project,
    home: homeFrom(ctx.env),
    policy,
    agent,
    scopes,
    privatePem: privatePemOf(ctx),
    days: intFlag(ctx, "days", 7),
    maxWrites: intFlag(ctx, "max-writes", 50),
    ...(stringFlag(ctx, "id") !== null ? { grantId: stringFlag(ctx, "id")! } : {}),
    ...(stringFlag(ctx, "key-id") !== null ? { keyId: stringFlag(ctx, "key-id")! } : {}),
    replace: ctx.parsed.flags.replace === true,
    now: ctx.now(),
  });
  const g = r.record;
  const lines = [
    `wrote direct grant ${g.grant_id} for ${agent} to ${r.file}: tools ${
      (g.tools as string[]).join(", ")
    }; scopes ${(g.write_scopes as string[]).join(", ")}; gates ${
      Object.keys(g.gates as Record<string, string>).join(", ") || "none"
    }; ${g.max_writes} writes; expires ${g.expires}; key ${g.key_id}`,
    r.verifyKey.written
      ? `wrote the verify key ${r.verifyKey.path}`
      : `the verify key ${r.verifyKey.path} is already there`,
    ...(r.replaced.length > 0 ? [`dropped ${r.replaced.join(", ")} (--replace)`] : []),
    "a running runner stops when this file changes (it is pinned): restart agentteams serve",
  ];
  return {
    exit: 0,
    text: lines.join("\n"),
    json: {
      ok: true,
      file: r.file,
      verify_key: r.verifyKey.path,
      verify_key_written: r.verifyKey.written,
      replaced: [...r.replaced],
      ...g,
    },
  };
}

/**
 * Runs `mcp grant list`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { mcpGrantList } from "./mcp_grant_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams mcp grant list`
 * (await mcpGrantList(ctx)).exit; // 0
 * ```
 */
export async function mcpGrantList(ctx: Ctx): Promise<Outcome> {
  const policy = await fullPolicy(ctx);
  const r = await listDirectGrants({
    root: ctx.project,
    home: homeFrom(ctx.env),
    policy,
    now: ctx.now(),
  });
  const lines = r.grants.length === 0 ? [`no direct grants in ${r.file}`] : [
    `direct grants in ${r.file}:`,
    ...r.grants.map((g) =>
      `  ${JSON.stringify(g.grant_id)} ${JSON.stringify(g.agent)}: ` +
      (g.problem === null
        ? `valid (max ${g.max_writes} writes, expires ${g.expires})`
        : `not valid: ${g.problem}`)
    ),
    ...r.problems.map((p) => `  ${p}`),
  ];
  return {
    exit: 0,
    text: lines.join("\n"),
    json: { ok: true, file: r.file, grants: r.grants, problems: r.problems },
  };
}
