/**
 * The command table: every command of the CLI contract, its flags, what it needs from Deno, and
 * its handler (loaded on demand, so a command pays only for its own modules). Commands not built
 * yet are listed too and say so (exit 2).
 *
 * @module
 */
import { dirname, join, resolve } from "../fs/path.ts";
import { DEFAULT_BRIEF_NAMES } from "../policy/lint.ts";
import { sanitizePath } from "../requests/env.ts";
import { diskFs, resolveProgram } from "../requests/resolve.ts";
import { keyDir } from "../crypto/keys.ts";
import { UsageError } from "../errors.ts";
import { PERL } from "../fs/anchored_write.ts";
import { BWRAP_PATH } from "../sandbox/bwrap.ts";
import { SETSID_PATH } from "../requests/process.ts";
import { CHILD_ENV, KEY_ENV, mergeNeeds, type Needs, NO_NEEDS } from "../permissions.ts";
import { STATE_DIR } from "../ledger/paths.ts";
import type { FlagSpec } from "./parse.ts";
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

function keyNeeds(ctx: Ctx): Needs {
  return { ...NO_NEEDS, read: [keyDir(ctx.env)], env: KEY_ENV, sys: ["uid"] };
}

function stateNeeds(ctx: Ctx, write: boolean): Needs {
  const state = join(ctx.project, STATE_DIR);
  // Reading the project root itself lets the state dir's creation be fsynced.
  return { ...NO_NEEDS, read: write ? [ctx.project, state] : [state], write: write ? [state] : [] };
}

/** Absolute PATH entries (where programs are looked up). */
function pathDirs(ctx: Ctx): string[] {
  return sanitizePath(ctx.env.PATH).split(":").filter((d) => d !== "");
}

/** A program as `run` and the git context resolve it (sanitized PATH, outside the project), or `null`. */
function onPath(ctx: Ctx, name: string): string | null {
  try {
    return resolveProgram(name, { path: ctx.env.PATH, projectRoot: ctx.project, fs: diskFs }).path;
  } catch {
    return null;
  }
}

/**
 * With `--unconfined`, the programs the tool itself spawns: the request's `argv[0]` (run) or
 * every gate's program (apply). Unreadable inputs contribute nothing; the command then refuses
 * with its own error.
 */
async function unconfinedPrograms(ctx: Ctx, what: "gates" | "command"): Promise<string[]> {
  if (ctx.parsed.flags.unconfined !== true) return [];
  try {
    if (what === "command") {
      const file = ctx.parsed.positionals.FILE;
      if (typeof file !== "string") return [];
      const a = JSON.parse(Deno.readTextFileSync(resolve(file))) as { argv?: unknown };
      const p = Array.isArray(a.argv) && typeof a.argv[0] === "string"
        ? onPath(ctx, a.argv[0])
        : null;
      return p === null ? [] : [p];
    }
    const policy = await (await import("./policy_ctx.ts")).fullPolicy(ctx);
    return Object.values(policy.gates).map((g) => onPath(ctx, g.argv[0])).filter((
      p,
    ): p is string => p !== null);
  } catch {
    return [];
  }
}

/**
 * The exec entries of the confined programs (brief or operator file; `~/` expanded): the sandbox
 * resolves their real paths, so they must be readable. Unreadable inputs contribute nothing.
 */
async function confinedExecPaths(ctx: Ctx): Promise<string[]> {
  try {
    const home = ctx.env.HOME ?? "/";
    const policy = await (await import("./policy_ctx.ts")).fullPolicy(ctx);
    const entries = [
      ...Object.values(policy.confinedPrograms?.agents ?? {}).flatMap((a) => a.exec),
      ...Object.values(policy.gates).flatMap((g) => g.exec ?? []),
    ];
    return entries.map((e) => e.startsWith("~/") ? join(home, e.slice(2)) : e);
  } catch {
    return [];
  }
}

/** `git` resolved on the PATH (for `--allow-run`), or nothing when it cannot be found. */
function gitProgram(ctx: Ctx): string[] {
  // Resolved as the git context resolves it, so the flag names the very path it spawns.
  const git = onPath(ctx, "git");
  return git === null ? [] : [git];
}

/**
 * What `apply` and `run` need: the project, the brief, the artifact, the key, the sandbox
 * (`/usr/bin/bwrap`, a private TMPDIR, `/proc` for process groups), and the PATH directories
 * where programs are resolved.
 */
async function actingNeeds(
  ctx: Ctx,
  opts: { writeProject: boolean; run?: string[] },
): Promise<Needs> {
  const brief = typeof ctx.parsed.flags.brief === "string"
    ? [resolve(ctx.parsed.flags.brief)]
    : DEFAULT_BRIEF_NAMES.map((n) => join(ctx.project, n));
  const file = typeof ctx.parsed.positionals.FILE === "string"
    ? [resolve(ctx.parsed.positionals.FILE)]
    : [];
  const tmp = ctx.env.TMPDIR && ctx.env.TMPDIR.startsWith("/") ? ctx.env.TMPDIR : "/tmp";
  const home = ctx.env.HOME && ctx.env.HOME.startsWith("/") ? [ctx.env.HOME] : [];
  const confinedDir = home.map((h) => join(h, ".config", "agentteams", "confined"));
  return mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, true), {
    read: [
      ctx.project,
      ...brief,
      ...file,
      tmp,
      "/proc",
      ...confinedDir,
      ...pathDirs(ctx),
      BWRAP_PATH,
      SETSID_PATH,
      ...await confinedExecPaths(ctx),
    ],
    write: [...(opts.writeProject ? [ctx.project] : []), tmp],
    run: [BWRAP_PATH, SETSID_PATH, ...(opts.run ?? [])],
    env: [...KEY_ENV, ...CHILD_ENV],
    sys: ["uid"],
  });
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
    run: async (ctx) => (await import("./keys.ts")).keysInit(ctx),
  },
  {
    words: ["dispatch"],
    summary: "issue a dispatch nonce for an agent; prints the nonce once",
    positionals: [],
    flags: [{ name: "agent", kind: "string", value: "SLUG", help: "the agent's slug" }],
    env: KEY_ENV,
    built: true,
    needs: (ctx) => mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, true)),
    run: async (ctx) => (await import("./dispatch.ts")).dispatch(ctx),
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
    needs: async (ctx) =>
      actingNeeds(ctx, {
        writeProject: true,
        run: [PERL, ...await unconfinedPrograms(ctx, "gates")],
      }),
    run: async (ctx) => (await import("./apply.ts")).apply(ctx),
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
    needs: async (ctx) =>
      actingNeeds(ctx, {
        writeProject: true,
        run: [...gitProgram(ctx), ...await unconfinedPrograms(ctx, "command")],
      }),
    run: async (ctx) => (await import("./run.ts")).run(ctx),
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
    run: async (ctx) => (await import("./ledger.ts")).ledgerVerify(ctx),
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
    run: async (ctx) => (await import("./ledger.ts")).ledgerCheckpoint(ctx),
  },
  {
    words: ["ledger", "show"],
    summary: "print ledger rows (no verification; see ledger verify)",
    positionals: [],
    flags: [{ name: "tail", kind: "string", value: "N", help: "only the last N rows" }],
    env: [],
    built: true,
    needs: (ctx) => stateNeeds(ctx, false),
    run: async (ctx) => (await import("./ledger.ts")).ledgerShow(ctx),
  },
  {
    words: ["ledger", "repair"],
    summary: "remove a torn tail left by an interrupted write, and record the repair",
    positionals: [],
    flags: [{ name: "torn-tail", kind: "bool", help: "remove the unterminated last row" }],
    env: KEY_ENV,
    built: true,
    needs: (ctx) => mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, true)),
    run: async (ctx) => (await import("./ledger.ts")).ledgerRepair(ctx),
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
    // To compute another command's needs it reads the brief and the operator's confined-programs
    // file (whose custody check asks for the uid).
    needs: (ctx) => ({
      ...NO_NEEDS,
      read: [
        ctx.project,
        ...(ctx.env.HOME?.startsWith("/")
          ? [join(ctx.env.HOME, ".config/agentteams/confined")]
          : []),
        ...(typeof ctx.parsed.flags.brief === "string" ? [resolve(ctx.parsed.flags.brief)] : []),
      ],
      env: [...KEY_ENV, ...CHILD_ENV],
      sys: ["uid"],
    }),
    run: async (ctx) => (await import("./permissions_cmd.ts")).permissionsCmd(ctx),
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
    run: async (ctx) => (await import("./schema.ts")).schema(ctx),
  },
];

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
