/**
 * The command table: every command of the CLI contract, its flags, what it needs from Deno, and
 * its handler (loaded on demand, so a command pays only for its own modules). Commands not built
 * yet are listed too and say so (exit 2).
 *
 * @module
 */
import { dirname, join, resolve } from "../fs/path.ts";
import { UsageError } from "../errors.ts";
import { mergeNeeds, type Needs, NO_NEEDS } from "../permissions.ts";
import { KEY_ENV, keyDir } from "../crypto/keys.ts";
import { CHILD_ENV } from "../process/child_env.ts";
import { STATE_DIR } from "../ledger/paths.ts";
import { CONFINED_DIR_REL } from "../sandbox/operator_file.ts";
import type { FlagSpec } from "./parse.ts";
import { codeDir, loadCode } from "./code_dir.ts";
import type { CommandSpec, Ctx, Outcome } from "./types.ts";

const UNCONFINED_FLAG: FlagSpec = {
  name: "unconfined",
  kind: "bool",
  help: "run gates and commands outside the sandbox (needs allow_unconfined_runs; recorded)",
};

/** Flags every command accepts. */
export const COMMON_FLAGS: readonly FlagSpec[] = [
  { name: "project", kind: "string", value: "DIR", help: "the project root (default: .)" },
  {
    name: "brief",
    kind: "string",
    value: "FILE",
    help: "the brief (alias --description; default <project>/agentteams.jsonc, then .json)",
  },
  { name: "json", kind: "bool", help: "print one JSON object on stdout" },
  { name: "help", kind: "bool", help: "show this help" },
];

/**
 * What loading the ledger key needs: the key dir, its variables, and `sys` uid (custody).
 *
 * @example
 * ```ts
 * import { keyNeeds } from "./commands.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // with HOME=/home/op, AGENTTEAMS_KEY_DIR unset
 * keyNeeds(ctx).read; // ["/home/op/.config/agentteams/keys"]
 * ```
 */
export function keyNeeds(ctx: Ctx): Needs {
  return { ...NO_NEEDS, read: [keyDir(ctx.env)], env: KEY_ENV, sys: ["uid"] };
}

/**
 * What reading (or, with `write`, writing) the project's state dir needs.
 *
 * @example
 * ```ts
 * import { stateNeeds } from "./commands.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // in project /p
 * stateNeeds(ctx, false).read; // ["/p/.agentteams"]
 * ```
 */
export function stateNeeds(ctx: Ctx, write: boolean): Needs {
  const state = join(ctx.project, STATE_DIR);
  // Reading the project root itself lets the state dir's creation be fsynced.
  return { ...NO_NEEDS, read: write ? [ctx.project, state] : [state], write: write ? [state] : [] };
}

/**
 * `--brief` as an absolute path, or `null` when it was not given (the project's default applies).
 *
 * @example
 * ```ts
 * import { briefFlagPath } from "./commands.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // with --brief docs/brief.jsonc, run from /work/p
 * briefFlagPath(ctx); // "/work/p/docs/brief.jsonc"
 * ```
 */
export function briefFlagPath(ctx: Ctx): string | null {
  const b = ctx.parsed.flags.brief;
  return typeof b === "string" ? resolve(b) : null;
}

/**
 * The temporary directory the permission needs name for acting commands: `TMPDIR` when absolute,
 * else `/tmp`. (A relative `TMPDIR` fails later, when the run makes its private directory in it.)
 *
 * @example
 * ```ts
 * import { tmpDirOf } from "./commands.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // with TMPDIR unset
 * tmpDirOf(ctx); // "/tmp"
 * ```
 */
export function tmpDirOf(ctx: Ctx): string {
  const tmp = ctx.env.TMPDIR;
  return tmp !== undefined && tmp.startsWith("/") ? tmp : "/tmp";
}

/**
 * The operator's confined-programs directory, when HOME is absolute (else none).
 *
 * @example
 * ```ts
 * import { confinedDirs } from "./commands.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // with HOME=/home/op
 * confinedDirs(ctx); // ["/home/op/.config/agentteams/confined"]
 * ```
 */
export function confinedDirs(ctx: Ctx): string[] {
  const home = ctx.env.HOME;
  return home?.startsWith("/") ? [join(home, CONFINED_DIR_REL)] : [];
}

function notBuilt(plannedIn: string) {
  return (ctx: Ctx): Promise<Outcome> =>
    Promise.reject(
      new UsageError(
        "NOT_IMPLEMENTED",
        `\`${ctx.name}\` is not built yet in this version (planned: ${plannedIn})`,
      ),
    );
}

function unbuilt(words: string[], summary: string, plannedIn: string): CommandSpec {
  return {
    words,
    summary,
    positionals: [],
    flags: [],
    env: [],
    built: false,
    plannedIn,
    needs: () => NO_NEEDS,
    run: notBuilt(plannedIn),
  };
}

/** Every command, in help order. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    words: ["keys", "init"],
    summary: "create the operator keys (HMAC ledger key, Ed25519 pair) in a 0700 key dir",
    positionals: [],
    flags: [],
    env: KEY_ENV,
    built: true,
    needs: (ctx) => {
      const dir = keyDir(ctx.env);
      return { ...NO_NEEDS, read: [dirname(dir), dir], write: [dir], env: KEY_ENV, sys: ["uid"] };
    },
    run: async (ctx) => (await loadCode(() => import("./keys.ts"))).keysInit(ctx),
  },
  {
    words: ["dispatch"],
    summary: "issue a dispatch nonce for an agent; prints the nonce once",
    positionals: [],
    flags: [{ name: "agent", kind: "string", value: "SLUG", help: "the agent's slug" }],
    env: KEY_ENV,
    built: true,
    needs: (ctx) => mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, true)),
    run: async (ctx) => (await loadCode(() => import("./dispatch.ts"))).dispatch(ctx),
  },
  {
    words: ["apply"],
    summary: "check and apply a change or deletion proposal",
    help: "Every check and gate runs; with --dry-run nothing is written and no use is spent.\n" +
      "FILE is the artifact (JSON). Refusals are recorded in the ledger (except dry runs).",
    positionals: [{ name: "FILE", required: true }],
    flags: [
      { name: "dry-run", kind: "bool", help: "check and run gates; change nothing" },
      UNCONFINED_FLAG,
    ],
    env: [...KEY_ENV, ...CHILD_ENV],
    built: true,
    needs: async (ctx) => (await loadCode(() => import("./acting_needs.ts"))).applyNeeds(ctx),
    needsSpawns: async (ctx) =>
      (await loadCode(() => import("./acting_needs.ts"))).actingNeedsSpawns(ctx),
    run: async (ctx) => (await loadCode(() => import("./apply.ts"))).apply(ctx),
  },
  {
    words: ["run"],
    summary: "check and run a command request (its exit code passes through)",
    help: "The command runs confined, in its own process group, with a sanitized environment;\n" +
      "undeclared writes and timeouts exit 3. FILE is the artifact (JSON).",
    positionals: [{ name: "FILE", required: true }],
    flags: [{ name: "dry-run", kind: "bool", help: "check only; run nothing" }, UNCONFINED_FLAG],
    env: [...KEY_ENV, ...CHILD_ENV],
    built: true,
    needs: async (ctx) => (await loadCode(() => import("./acting_needs.ts"))).runNeeds(ctx),
    needsSpawns: async (ctx) =>
      (await loadCode(() => import("./acting_needs.ts"))).actingNeedsSpawns(ctx),
    run: async (ctx) => (await loadCode(() => import("./run.ts"))).run(ctx),
  },
  {
    words: ["ledger", "verify"],
    summary: "verify the ledger, its head and the dispatch store",
    positionals: [],
    flags: [
      {
        name: "checkpoint",
        kind: "string",
        value: "FILE",
        help: "also check that the ledger extends this signed checkpoint",
      },
      {
        name: "verify-key",
        kind: "string",
        value: "PEM",
        help: "public key for --checkpoint (default: the key dir's operator-ed25519.pub.pem)",
      },
    ],
    env: KEY_ENV,
    built: true,
    needs: (ctx) => {
      const extra: string[] = [];
      for (const f of ["checkpoint", "verify-key"]) {
        const v = ctx.parsed.flags[f];
        if (typeof v === "string") extra.push(resolve(v));
      }
      return mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, false), { ...NO_NEEDS, read: extra });
    },
    run: async (ctx) => (await loadCode(() => import("./ledger.ts"))).ledgerVerify(ctx),
  },
  {
    words: ["ledger", "checkpoint"],
    summary: "write an Ed25519-signed checkpoint {count, last, time, key_id}",
    positionals: [],
    flags: [{
      name: "out",
      kind: "string",
      value: "FILE",
      help: "write it here (default: stdout)",
    }],
    env: KEY_ENV,
    built: true,
    needs: (ctx) => {
      const out = ctx.parsed.flags.out;
      const outPath = typeof out === "string" ? [resolve(out)] : [];
      return mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, false), {
        ...NO_NEEDS,
        read: outPath.map((p) => dirname(p)),
        write: outPath.map((p) => dirname(p)),
      });
    },
    run: async (ctx) => (await loadCode(() => import("./ledger.ts"))).ledgerCheckpoint(ctx),
  },
  {
    words: ["ledger", "show"],
    summary: "print ledger rows (no verification; see ledger verify)",
    positionals: [],
    flags: [{ name: "tail", kind: "string", value: "N", help: "only the last N rows" }],
    env: [],
    built: true,
    needs: (ctx) => stateNeeds(ctx, false),
    run: async (ctx) => (await loadCode(() => import("./ledger.ts"))).ledgerShow(ctx),
  },
  {
    words: ["ledger", "repair"],
    summary: "remove a torn tail left by an interrupted write, and record the repair",
    positionals: [],
    flags: [{ name: "torn-tail", kind: "bool", help: "remove the unterminated last row" }],
    env: KEY_ENV,
    built: true,
    needs: (ctx) => mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, true)),
    run: async (ctx) => (await loadCode(() => import("./ledger.ts"))).ledgerRepair(ctx),
  },
  unbuilt(["audit"], "AR_WRITE_POLICY audit of agent files (text, json, sarif; --fix)", "later"),
  unbuilt(["serve"], "the out-of-session runner", "later"),
  unbuilt(["submit"], "queue an artifact for the runner", "later"),
  unbuilt(["wait"], "wait for a queued artifact's result", "later"),
  unbuilt(["waiver", "issue"], "issue a signed waiver", "later"),
  unbuilt(["waiver", "verify"], "verify every waiver row (read-only)", "later"),
  unbuilt(["waiver", "check"], "check whether a waiver would lift a gate", "later"),
  unbuilt(["grant", "sign"], "sign an Ed25519 capability grant", "later"),
  unbuilt(["grant", "issue"], "issue an HMAC (non-widening) grant", "later"),
  unbuilt(["grant", "verify"], "verify every grant row (read-only)", "later"),
  unbuilt(["decision", "sign"], "sign a security decision row", "later"),
  unbuilt(["decision", "verify"], "verify the decision log", "later"),
  unbuilt(["clearance", "check"], "report what a clearance would do, consuming nothing", "later"),
  {
    words: ["permissions"],
    summary: "print the narrowest `deno run` flags for a command on this project",
    positionals: [{ name: "COMMAND", required: true, variadic: true }],
    flags: [],
    env: [...KEY_ENV, ...CHILD_ENV],
    built: true,
    // To compute another command's needs it reads what that command reads (its brief, its
    // artifact, the operator's confined-programs file, whose custody check asks for the uid, and
    // the PATH directories programs are resolved in).
    needs: async (ctx) =>
      mergeNeeds({
        ...NO_NEEDS,
        read: [ctx.project, ...confinedDirs(ctx), ...(briefFlagPath(ctx) ?? [])],
        env: [...KEY_ENV, ...CHILD_ENV],
        sys: ["uid"],
      }, await (await loadCode(() => import("./permissions_cmd.ts"))).targetReads(ctx)),
    run: async (ctx) => (await loadCode(() => import("./permissions_cmd.ts"))).permissionsCmd(ctx),
  },
  {
    words: ["schema"],
    summary: "print the JSON Schema of an artifact (change-proposal, delete-proposal, " +
      "command-request)",
    positionals: [{ name: "NAME", required: false }],
    flags: [],
    env: [],
    built: true,
    needs: () => NO_NEEDS,
    run: async (ctx) => (await loadCode(() => import("./schema.ts"))).schema(ctx),
  },
];

/**
 * Everything a command needs from Deno: its own needs plus reading the program's code, which its
 * modules are loaded from on first use.
 *
 * @example
 * ```ts
 * import { findCommand, needsOf } from "./commands.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // `agentteams ledger show` in project /p
 * (await needsOf(findCommand(["ledger", "show"])!.spec, ctx)).read;
 * // ["/p/.agentteams", "<code dir>"], sorted (codeDir(): lib/ in the source tree)
 * ```
 */
export async function needsOf(spec: CommandSpec, ctx: Ctx): Promise<Needs> {
  return mergeNeeds(await spec.needs(ctx), { ...NO_NEEDS, read: [codeDir()] });
}

/**
 * Finds the command named by the leading words of argv (longest match first).
 *
 * @example
 * ```ts
 * import { findCommand } from "./commands.ts";
 * findCommand(["ledger", "verify", "--json"])?.spec.words; // ["ledger", "verify"]
 * ```
 */
export function findCommand(
  argv: readonly string[],
): { spec: CommandSpec; rest: string[] } | null {
  let best: CommandSpec | null = null;
  for (const c of COMMANDS) {
    if (c.words.every((w, i) => argv[i] === w)) {
      if (best === null || c.words.length > best.words.length) best = c;
    }
  }
  return best === null ? null : { spec: best, rest: argv.slice(best.words.length) };
}
