/**
 * The command table: every command of the CLI contract, its flags, what it needs from Deno, and
 * its handler (loaded on demand, so a command pays only for its own modules).
 *
 * @module
 */
import { AUDIT_ENV } from "../audit/audit_env.ts";
import { auditRootOf } from "../audit/root.ts";
import { claudeLookDirs } from "../audit/hosts/claude_dirs.ts";
import { PERL_PATH } from "../host/programs.ts";
import { didYouMean } from "../text/suggest.ts";
import { GIT_CONFIG_ENV } from "../git/config_env.ts";
import { dirname, join, resolve } from "../fs/path.ts";

import {
  CATEGORIES,
  type Category,
  mergeNeeds,
  neededCategories,
  type Needs,
  NO_NEEDS,
} from "../permissions.ts";
import { KEY_ENV, keyDir, RUNNER_FORBIDDEN_ENV, RUNNER_SEAL_PUB_FILE } from "../crypto/keys.ts";
import { queuePaths } from "../queue/queue_paths.ts";
import { CHILD_ENV } from "../process/child_env.ts";
import { codeDir, loadCode } from "./code_dir.ts";
import { QUEUE_FLAGS, UNCONFINED_FLAG } from "./common_flags.ts";
import {
  briefFlagReads,
  confinedDirs,
  directGrantDirs,
  hostSettingsNeeds,
  keyNeeds,
  stateNeeds,
} from "./needs.ts";
import { PROGRESS_ENV } from "./terminal.ts";
import { authzNeeds, teamDirOf } from "./needs.ts";
import { DECISION_KEY_ENV, GRANT_KEY_ENV, WAIVER_KEY_ENV } from "../authz/key_env.ts";
import { DEFAULT_TEAM_DIR_REL } from "../layout.ts";
import type { CommandSpec, CommandTable, Ctx, Outcome } from "./command_spec.ts";

/**
 * An acting command's needs, or, in queue mode (the runner acts; lib/runner/mode.ts), the queue's:
 * no key, no state dir, no program.
 */
function queued(direct: (ctx: Ctx) => Needs | Promise<Needs>): (ctx: Ctx) => Promise<Needs> {
  return async (ctx) => {
    const q = await loadCode(() => import("./queue_mode.ts"));
    return (await q.queueReason(ctx)) !== null
      ? q.queueNeeds(ctx)
      : mergeNeeds(await direct(ctx), q.modeNeeds(ctx));
  };
}
/**
 * An acting command's `run`: in direct mode git's context is started first (two git processes,
 * lib/git/context.ts), so they work while the act's code loads; then the command's own `run`.
 */
function gitFirst(
  load: () => Promise<(ctx: Ctx) => Promise<Outcome>>,
): (ctx: Ctx) => Promise<Outcome> {
  return async (ctx) => {
    const q = await loadCode(() => import("./queue_mode.ts"));
    if ((await q.queueReason(ctx)) === null) {
      (await loadCode(() => import("./git_ctx.ts"))).gitContextOf(ctx);
    }
    return await (await loadCode(load))(ctx);
  };
}

/** What `apply` and `run` ask for in direct mode (lib/cli/acting_needs.ts `actingNeeds`). */
const ACTING_CATEGORIES: readonly Category[] = ["read", "write", "run", "env", "sys"];

/**
 * The categories of {@link queued}'s needs, told without working the lists out: the queue's in
 * queue mode, else `direct` (which must cover the queue mode check's own reads too).
 */
function queuedCategories(
  direct: readonly Category[],
): (ctx: Ctx) => Promise<readonly Category[]> {
  return async (ctx) => {
    const q = await loadCode(() => import("./queue_mode.ts"));
    return (await q.queueReason(ctx)) !== null ? neededCategories(q.queueNeeds(ctx)) : direct;
  };
}

/** What the triad's trust roots are found with (the key dir: HOME, AGENTTEAMS_KEY_DIR). */
const TRUST_ENV = ["HOME", "AGENTTEAMS_KEY_DIR"];

/** What `doctor` reads of the environment: key custody's variables and every one the runner refuses. */
const DOCTOR_ENV: readonly string[] = [...new Set([...KEY_ENV, ...RUNNER_FORBIDDEN_ENV])];

/**
 * What `init` reads of the environment: where the key dir is (the settings rules name it, no key
 * is read), the yaml parser's switches (the audit), the progress line's.
 */
const INIT_ENV: readonly string[] = [
  "HOME",
  "AGENTTEAMS_KEY_DIR",
  "AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE",
  ...AUDIT_ENV,
  ...PROGRESS_ENV,
];

const TEAM_DIR_FLAG = {
  name: "team-dir",
  kind: "string",
  value: "DIR",
  help:
    `the holder's team dir: its roster and verify keys (default <project>/${DEFAULT_TEAM_DIR_REL})`,
} as const;

const GRANT_FLAGS = [
  { name: "id", kind: "string", value: "ID", help: "the grant id (unique)" },
  { name: "issuer-team", kind: "string", value: "TEAM", help: "the issuing team" },
  { name: "holder-team", kind: "string", value: "TEAM", help: "the holding team" },
  { name: "target", kind: "string", value: "PATH", help: "the target in the issuer's workspace" },
  { name: "ops", kind: "string", value: "OPS", help: "operations, ;-separated (write widens)" },
  { name: "expires", kind: "string", value: "ISO", help: "expiry (ISO-8601)" },
  { name: "max-uses", kind: "string", value: "N", help: "uses allowed" },
  { name: "approver", kind: "string", value: "NAME", help: "the approver (team-dir roster)" },
  { name: "ticket", kind: "string", value: "T", help: "the ticket id" },
  { name: "reason", kind: "string", value: "R", help: "the reason code" },
  { name: "issuer-root", kind: "string", value: "DIR", help: "the issuer's absolute root" },
  TEAM_DIR_FLAG,
] as const;

const GRANT_HELP = "Appends to <project>/references/capability-grants.log.csv (the holder's\n" +
  "workspace; created on first use), chained, verified against the team dir before it is\n" +
  "written. Valid write grants widen the holder runner's write roots at its next start only.";

/** A release command's needs: its key files read, its DIR read (and written when `writes`). */
function releaseNeeds(ctx: Ctx, files: readonly string[], writes: boolean): Needs {
  const read: string[] = [];
  for (const f of files) {
    const v = ctx.parsed.flags[f];
    if (typeof v === "string") read.push(resolve(v));
  }
  const dir = ctx.parsed.positionals.DIR;
  const dirs = typeof dir === "string" ? [resolve(dir)] : [];
  return { ...NO_NEEDS, read: [...read, ...dirs], write: writes ? dirs : [] };
}

/**
 * What the audit reads above each team root: Claude Code and the Copilot CLI also load each
 * parent's agent folders up to the git root (lib/audit/hosts/claude_dirs.ts, copilot.ts), so the
 * audit looks at each parent's .git, .claude and .github, and Claude Code's .mcp.json (each
 * directory's up to `/`), and reads nothing else there (`audit` and `init`, which runs it).
 */
function parentAgentLooks(roots: readonly string[]): string[] {
  return roots.flatMap((r) =>
    claudeLookDirs(r, null).slice(1).flatMap((d) =>
      [".git", ".claude", ".github", ".mcp.json"].map((n) => join(d, n))
    )
  );
}

const WAIT_FLAG = {
  name: "wait-timeout",
  kind: "string",
  value: "S",
  help: "wait this many seconds for the runner's answer (default 120)",
} as const;

/** What a staged command reads: the queue (no key; the runner answers), the runner's public key. */
async function stagedNeeds(ctx: Ctx): Promise<Needs> {
  return (await loadCode(() => import("./queue_mode.ts"))).queueNeeds(ctx);
}

const STAGED_HELP =
  "A request on the orchestrator's queue, answered by the runner (agentteams serve),\n" +
  "which alone reads .agentteams/staged/: without one, NO_RUNNER.";

/** `staged list|show|apply|reject`: the orchestrator's side of proposals staged over MCP. */
const STAGED_COMMANDS: readonly CommandSpec[] = [
  {
    words: ["staged", "list"],
    summary: "list the proposals staged for approval (oldest first; expired ones purged)",
    help: STAGED_HELP + "\nA record that does not verify is listed as malformed: reject it.",
    positionals: [],
    flags: [WAIT_FLAG],
    env: ["HOME", "AGENTTEAMS_KEY_DIR"],
    needs: stagedNeeds,
    run: async (ctx) => (await loadCode(() => import("./staged_cmd.ts"))).stagedList(ctx),
  },
  {
    words: ["staged", "show"],
    summary: "print one staged proposal, content included",
    help: STAGED_HELP + "\nSID is the id the stage receipt and `staged list` print (32 hex).",
    positionals: [{ name: "SID", required: true }],
    flags: [WAIT_FLAG],
    env: ["HOME", "AGENTTEAMS_KEY_DIR"],
    needs: stagedNeeds,
    run: async (ctx) => (await loadCode(() => import("./staged_cmd.ts"))).stagedShow(ctx),
  },
  {
    words: ["staged", "apply"],
    summary: "approve a staged proposal: every check and gate again, then the write",
    help: STAGED_HELP + "\nThe checks run as the record's agent against the tree as it is now\n" +
      "(a changed file: STALE_BASE); no dispatch use is spent. Recorded as apply-staged.",
    positionals: [{ name: "SID", required: true }],
    flags: [WAIT_FLAG],
    env: ["HOME", "AGENTTEAMS_KEY_DIR"],
    needs: stagedNeeds,
    run: async (ctx) => (await loadCode(() => import("./staged_cmd.ts"))).stagedApply(ctx),
  },
  {
    words: ["staged", "reject"],
    summary: "reject a staged proposal (recorded with its reason); nothing is written",
    help: STAGED_HELP + "\nThe reason is recorded in the reject-staged row (300 characters kept).",
    positionals: [{ name: "SID", required: true }],
    flags: [
      { name: "reason", kind: "string", value: "TEXT", help: "why (required; recorded)" },
      WAIT_FLAG,
    ],
    env: ["HOME", "AGENTTEAMS_KEY_DIR"],
    needs: stagedNeeds,
    run: async (ctx) => (await loadCode(() => import("./staged_cmd.ts"))).stagedReject(ctx),
  },
];

/** Every command, in help order. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    words: ["keys", "init"],
    summary: "create the operator keys (HMAC ledger key, Ed25519 pair) in a 0700 key dir",
    help:
      "With --decision and/or --waiver, also the triad's HMAC signing key(s): decision-signing.key,\n" +
      "waiver-signing.key (0600, 64 hex characters, no newline), never replacing one; keys already\n" +
      "made by an earlier `keys init` are kept. The triad reads them from AGENTTEAMS_DECISION_SIGNING_KEY\n" +
      'and AGENTTEAMS_WAIVER_SIGNING_KEY: export VAR="$(cat FILE)" in the operator\'s shell to sign.',
    positionals: [],
    flags: [
      { name: "decision", kind: "bool", help: "also make the decision log's HMAC signing key" },
      { name: "waiver", kind: "bool", help: "also make the waiver ledger's HMAC signing key" },
    ],
    env: KEY_ENV,
    needs: (ctx) => {
      const dir = keyDir(ctx.env);
      return { ...NO_NEEDS, read: [dirname(dir), dir], write: [dir], sys: ["uid"] };
    },
    run: async (ctx) => (await loadCode(() => import("./keys_cmd.ts"))).keysInit(ctx),
  },
  {
    words: ["dispatch"],
    summary: "issue a dispatch nonce for an agent the brief names; prints the nonce once",
    help: "The brief is read and checked first: a missing or broken brief, or an agent it does\n" +
      "not name in agent_policies (UNKNOWN_AGENT), is refused with nothing written.",
    positionals: [],
    flags: [
      { name: "agent", kind: "string", value: "SLUG", help: "the agent's slug" },
      ...QUEUE_FLAGS,
    ],
    env: KEY_ENV,
    // The state dir, the key, and the brief (the default one lies in the project, already read);
    // in queue mode, no key at all.
    // The operator's direct-write grants, read to give a granted agent a direct agent's nonce.
    needs: queued((ctx) =>
      mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, true), {
        ...NO_NEEDS,
        read: [...briefFlagReads(ctx), ...directGrantDirs(ctx)],
      })
    ),
    run: async (ctx) => (await loadCode(() => import("./dispatch_cmd.ts"))).dispatch(ctx),
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
      ...QUEUE_FLAGS,
    ],
    // The waiver key: a deletion under deletions_need_clearance may be allowed by a waiver.
    env: [...KEY_ENV, ...CHILD_ENV, ...GIT_CONFIG_ENV, WAIVER_KEY_ENV],
    categories: queuedCategories(ACTING_CATEGORIES),
    needs: queued(async (ctx) =>
      (await loadCode(() => import("./acting_needs.ts"))).applyNeeds(ctx)
    ),
    needsSpawns: async (ctx) =>
      (await loadCode(() => import("./acting_needs.ts"))).actingNeedsSpawns(ctx),
    run: gitFirst(async () => (await import("./apply_cmd.ts")).apply),
  },
  {
    words: ["run"],
    summary: "check and run a command request (its exit code passes through)",
    help: "The command runs confined, in its own process group, with a sanitized environment;\n" +
      "undeclared writes and timeouts exit 3. FILE is the artifact (JSON).",
    positionals: [{ name: "FILE", required: true }],
    flags: [
      { name: "dry-run", kind: "bool", help: "check only; run nothing" },
      UNCONFINED_FLAG,
      ...QUEUE_FLAGS,
    ],
    env: [...KEY_ENV, ...CHILD_ENV, ...GIT_CONFIG_ENV],
    categories: queuedCategories(ACTING_CATEGORIES),
    needs: queued(async (ctx) => (await loadCode(() => import("./acting_needs.ts"))).runNeeds(ctx)),
    needsSpawns: async (ctx) =>
      (await loadCode(() => import("./acting_needs.ts"))).actingNeedsSpawns(ctx),
    run: gitFirst(async () => (await import("./run_cmd.ts")).run),
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
        name: "allow-empty",
        kind: "bool",
        help: "a project with no ledger state at all verifies (default: refused, NO_LEDGER)",
      },
      {
        name: "verify-key",
        kind: "string",
        value: "PEM",
        help: "public key for --checkpoint (default: the key dir's operator-ed25519.pub.pem)",
      },
      {
        name: "pubkey",
        kind: "string",
        value: "PEM",
        help: "no ledger key: check the chain and head count against --checkpoint, signed by " +
          "this Ed25519 public key (rows' MACs unchecked; see docs/ledger.md)",
      },
      ...QUEUE_FLAGS,
    ],
    // The progress line reads CI and TERM (lib/cli/terminal.ts), in every form.
    env: [...KEY_ENV, ...PROGRESS_ENV],
    needs: (ctx) => {
      const extra: string[] = [];
      for (const f of ["checkpoint", "verify-key", "pubkey"]) {
        const v = ctx.parsed.flags[f];
        if (typeof v === "string") extra.push(resolve(v));
      }
      const files = { ...NO_NEEDS, read: extra };
      // With --pubkey no key is read and no runner asked: the state and the two files (the key
      // variables' names, which every form reads at start, come from `env`; never a key).
      if (ctx.parsed.flags.pubkey !== undefined) {
        return mergeNeeds(stateNeeds(ctx, false), files);
      }
      return queued(() => mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, false), files))(ctx);
    },
    run: async (ctx) => (await loadCode(() => import("./ledger_cmd.ts"))).ledgerVerify(ctx),
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
    needs: (ctx) => {
      const out = ctx.parsed.flags.out;
      const outPath = typeof out === "string" ? [resolve(out)] : [];
      return mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, false), {
        ...NO_NEEDS,
        read: outPath.map((p) => dirname(p)),
        write: outPath.map((p) => dirname(p)),
      });
    },
    run: async (ctx) => (await loadCode(() => import("./ledger_cmd.ts"))).ledgerCheckpoint(ctx),
  },
  {
    words: ["ledger", "show"],
    summary: "print ledger rows (no verification; see ledger verify)",
    positionals: [],
    flags: [{ name: "tail", kind: "string", value: "N", help: "only the last N rows" }],
    env: [],
    needs: (ctx) => stateNeeds(ctx, false),
    run: async (ctx) => (await loadCode(() => import("./ledger_cmd.ts"))).ledgerShow(ctx),
  },
  {
    words: ["ledger", "repair"],
    summary: "remove a torn tail left by an interrupted write, and record the repair",
    positionals: [],
    flags: [{ name: "torn-tail", kind: "bool", help: "remove the unterminated last row" }],
    env: KEY_ENV,
    needs: (ctx) => mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, true)),
    run: async (ctx) => (await loadCode(() => import("./ledger_cmd.ts"))).ledgerRepair(ctx),
  },
  {
    words: ["audit"],
    summary: "AR_WRITE_POLICY audit of agent files (text, json, sarif; --fix narrows them)",
    help: "DIR... are team directories (default: the project) or agent files. The switch is the\n" +
      'brief\'s write_policy "orchestrator-only" (limited by write_policy_frameworks); without it\n' +
      "the audit reports and exits 0. Exit 1 on an error (with --strict, on a warning too).\n" +
      "It reads files only; it never needs the ledger key. --fix writes only generated files\n" +
      "(adopted ones when named), atomically and through no link; a second --fix changes\n" +
      "nothing. A framework's agent folder (.claude/agents, .github/agents, .codex/agents, a\n" +
      "recipes folder) is judged from its team's root. Finding no agent file fails under the\n" +
      "switch and with --strict, unless --allow-empty.",
    positionals: [{ name: "DIR", required: false, variadic: true }],
    flags: [
      { name: "format", kind: "string", value: "FMT", help: "text (default), json or sarif" },
      { name: "fix", kind: "bool", help: "narrow what can be narrowed cleanly, then audit again" },
      {
        name: "dry-run",
        kind: "bool",
        help: "with --fix: show what it would change, write nothing",
      },
      { name: "strict", kind: "bool", help: "fail on warnings too" },
      { name: "allow-empty", kind: "bool", help: "finding no agent file is expected (no failure)" },
    ],
    // The yaml package's parser reads these two (its debug switches) on every parse; HOME and
    // the key dir's variable place the key dir for the Claude settings check (no key is read).
    env: [...AUDIT_ENV, "HOME", "AGENTTEAMS_KEY_DIR", ...PROGRESS_ENV],
    // The project and the named directories (read; written only with --fix), and the brief.
    needs: (ctx) => {
      const named = ((ctx.parsed.positionals.DIR as string[] | undefined) ?? []).map((d) =>
        resolve(d)
      );
      // A named agent folder is walked from its team's root.
      const roots = [ctx.project, ...named.map((d) => auditRootOf(d, ctx.project).base)];
      // --fix --dry-run writes nothing.
      const fix = ctx.parsed.flags.fix === true && ctx.parsed.flags["dry-run"] !== true;
      const parents = parentAgentLooks(roots);
      return {
        ...NO_NEEDS,
        read: [...roots, ...parents, ...briefFlagReads(ctx)],
        write: fix ? roots : [],
        // --fix writes through the anchored write (lib/fs/anchored_write.ts), a Perl program.
        run: fix ? [PERL_PATH] : [],
      };
    },
    run: async (ctx) => (await loadCode(() => import("./audit_cmd.ts"))).audit(ctx),
  },
  {
    words: ["serve"],
    summary: "the out-of-session runner: serve the project's queue (start it outside every " +
      "agent session)",
    help: "It alone reads the ledger key (from the key file; it refuses to start while a key\n" +
      "variable is set), holds the project's runner lock, pins the brief, the operator's\n" +
      "confined-programs file and the grants ledger (a change stops it), and serves one request\n" +
      "at a time, confined. Valid write grants (`grant verify --roots`) widen every confined\n" +
      "run's write roots, settled at its start and recorded in the ledger. Launch it with the\n" +
      "flags `agentteams permissions serve` prints. Stop it with Ctrl-C (SIGINT) or SIGTERM.\n" +
      "See docs/runner.md.",
    positionals: [],
    flags: [
      { name: "once", kind: "bool", help: "serve what is queued now, then stop" },
      TEAM_DIR_FLAG,
    ],
    // Every key variable (RUNNER_FORBIDDEN_ENV), so the runner can refuse to start while one is set.
    env: [...KEY_ENV, ...RUNNER_FORBIDDEN_ENV, ...CHILD_ENV, ...GIT_CONFIG_ENV],
    refuseNetFfi: true,
    needs: async (ctx) => (await loadCode(() => import("./acting_needs.ts"))).serveNeeds(ctx),
    needsSpawns: async (ctx) =>
      (await loadCode(() => import("./acting_needs.ts"))).actingNeedsSpawns(ctx),
    run: async (ctx) => (await loadCode(() => import("./serve_cmd.ts"))).serveCmd(ctx),
  },
  {
    words: ["submit"],
    summary: "queue an artifact for the runner; prints its id and the ticket `wait` needs",
    help: "The request carries a deadline: --wait-timeout S (default 120) plus 30 s from now. A\n" +
      "runner that has not claimed it by then refuses it (REQUEST_EXPIRED) instead of acting\n" +
      "for a waiter long gone. `agentteams cancel ID` withdraws it sooner.",
    positionals: [{ name: "FILE", required: true }],
    flags: [
      { name: "dry-run", kind: "bool", help: "the runner checks only; changes nothing" },
      {
        name: "wait-timeout",
        kind: "string",
        value: "S",
        help: "how long the caller will wait (default 120): the request expires 30 s after",
      },
    ],
    env: ["HOME", "AGENTTEAMS_KEY_DIR"],
    needs: async (ctx) => {
      const q = (await loadCode(() => import("./queue_mode.ts"))).queueNeeds(ctx);
      return mergeNeeds(q, {
        ...NO_NEEDS,
        read: [resolve(String(ctx.parsed.positionals.FILE))],
      });
    },
    run: async (ctx) => (await loadCode(() => import("./queue_cmd.ts"))).submit(ctx),
  },
  {
    words: ["wait"],
    summary: "wait for a queued request's result (the ticket `submit` printed, on stdin)",
    help: "Without a result in time, or when the runner stopped itself (its status says why),\n" +
      "the request is withdrawn if no runner has claimed it yet; the refusal says which.",
    positionals: [{ name: "ID", required: true }],
    flags: [
      {
        name: "wait-timeout",
        kind: "string",
        value: "S",
        help: "give up after this many seconds (default 120)",
      },
      {
        name: "timeout",
        kind: "string",
        value: "S",
        help: "the earlier spelling of --wait-timeout",
      },
    ],
    env: ["HOME", "AGENTTEAMS_KEY_DIR"],
    needs: async (ctx) => (await loadCode(() => import("./queue_mode.ts"))).queueNeeds(ctx),
    run: async (ctx) => (await loadCode(() => import("./queue_cmd.ts"))).wait(ctx),
  },
  {
    words: ["cancel"],
    summary: "withdraw a queued request no runner has claimed yet (nothing acts on it)",
    help: "Removes .agentteams-queue/requests/<ID>.json (or mcp-requests/), the entry itself,\n" +
      "never what it points to. A request a runner claimed already is being served: see its\n" +
      "rows with `agentteams ledger show`.",
    positionals: [{ name: "ID", required: true }],
    flags: [],
    env: [],
    needs: async (ctx) => (await loadCode(() => import("./queue_mode.ts"))).cancelNeeds(ctx),
    run: async (ctx) => (await loadCode(() => import("./queue_cmd.ts"))).cancel(ctx),
  },
  ...STAGED_COMMANDS,
  {
    words: ["waiver", "issue"],
    summary: "issue a signed waiver (HMAC with AGENTTEAMS_WAIVER_SIGNING_KEY, or --ed25519)",
    help: "Appends one row to references/security-waivers.log.csv (created on first use). The\n" +
      "row is validated as it will be read: an expired, unapproved or unsigned waiver is never\n" +
      "written. The approver must be on references/security-approvers.txt (none: security).",
    positionals: [],
    flags: [
      { name: "id", kind: "string", value: "ID", help: "the waiver id (unique)" },
      { name: "action", kind: "string", value: "ACTION", help: "the action id it lifts" },
      { name: "expires", kind: "string", value: "ISO", help: "expiry, with Z or an offset" },
      { name: "max-uses", kind: "string", value: "N", help: "how many uses it allows" },
      { name: "approver", kind: "string", value: "NAME", help: "who approved it" },
      { name: "ticket", kind: "string", value: "T", help: "the ticket id" },
      { name: "reason", kind: "string", value: "R", help: "the reason code" },
      {
        name: "conditions-verified",
        kind: "string",
        value: "V",
        help: "verified (default) or pending",
      },
      { name: "ed25519", kind: "bool", help: "sign with the operator's Ed25519 key (keys init)" },
    ],
    env: [WAIVER_KEY_ENV, ...KEY_ENV],
    // The ledger key and the state dir too: the write keeps the ledger's index for the gate.
    needs: (ctx) =>
      mergeNeeds(
        authzNeeds(ctx, {
          write: true,
          keyEnv: [WAIVER_KEY_ENV, ...KEY_ENV],
          operatorKey: ctx.parsed.flags.ed25519 === true,
        }),
        keyNeeds(ctx),
        stateNeeds(ctx, true),
      ),
    run: async (ctx) => (await loadCode(() => import("./waiver_cmd.ts"))).waiverIssue(ctx),
  },
  {
    words: ["waiver", "verify"],
    summary: "verify every waiver row, one valid/invalid/spent line each (read-only)",
    help:
      "Exit 1 when a row is invalid. A waiver that was simply used up is reported as spent and\n" +
      "does not fail the verify, unless --strict (for CI).",
    positionals: [],
    flags: [{
      name: "strict",
      kind: "bool",
      help: "a spent (used-up) waiver fails the verify too",
    }],
    env: [WAIVER_KEY_ENV, ...TRUST_ENV],
    needs: (ctx) => authzNeeds(ctx, { keyEnv: [WAIVER_KEY_ENV] }),
    run: async (ctx) => (await loadCode(() => import("./waiver_cmd.ts"))).waiverVerify(ctx),
  },
  {
    words: ["waiver", "accept"],
    summary: "after a verify that passes, hold the gate to the waiver ledger as it is now",
    help:
      "Verifies every waiver row (as waiver verify); when none is invalid, keeps the ledger's\n" +
      "index, so the gate holds the file to these bytes: what LEDGER_ROLLED_BACK asks for after\n" +
      "the operator changed the file by hand. Needs the proposal-ledger key.",
    positionals: [],
    flags: [],
    env: [WAIVER_KEY_ENV, ...TRUST_ENV, ...KEY_ENV],
    needs: (ctx) =>
      mergeNeeds(
        authzNeeds(ctx, { keyEnv: [WAIVER_KEY_ENV] }),
        keyNeeds(ctx),
        stateNeeds(ctx, true),
      ),
    run: async (ctx) => (await loadCode(() => import("./waiver_cmd.ts"))).waiverAccept(ctx),
  },
  {
    words: ["waiver", "check"],
    summary: "check whether a valid waiver would lift ACTION (consumes nothing)",
    positionals: [{ name: "ACTION", required: true }],
    flags: [],
    env: [WAIVER_KEY_ENV, ...TRUST_ENV],
    needs: (ctx) => authzNeeds(ctx, { keyEnv: [WAIVER_KEY_ENV] }),
    run: async (ctx) => (await loadCode(() => import("./waiver_cmd.ts"))).waiverCheck(ctx),
  },
  {
    words: ["grant", "sign"],
    summary: "sign a capability grant with the operator's Ed25519 key (the only widening kind)",
    help: GRANT_HELP,
    positionals: [],
    flags: GRANT_FLAGS,
    env: KEY_ENV,
    needs: (ctx) =>
      authzNeeds(ctx, {
        write: true,
        operatorKey: true,
        extraRead: [teamDirOf(ctx)],
        grants: true,
      }),
    run: async (ctx) => (await loadCode(() => import("./grant_cmd.ts"))).grantSign(ctx),
  },
  {
    words: ["grant", "issue"],
    summary: "issue an HMAC capability grant (non-widening: never write)",
    help: GRANT_HELP,
    positionals: [],
    flags: GRANT_FLAGS,
    env: [GRANT_KEY_ENV],
    needs: (ctx) =>
      authzNeeds(ctx, {
        write: true,
        keyEnv: [GRANT_KEY_ENV],
        extraRead: [teamDirOf(ctx)],
        grants: true,
      }),
    run: async (ctx) => (await loadCode(() => import("./grant_cmd.ts"))).grantIssue(ctx),
  },
  {
    words: ["grant", "verify"],
    summary: "verify every grant row and the chain, one valid/invalid line each (read-only)",
    positionals: [],
    flags: [
      TEAM_DIR_FLAG,
      {
        name: "roots",
        kind: "bool",
        help: "also print the write roots valid write grants add at the runner's next start",
      },
    ],
    env: [GRANT_KEY_ENV, DECISION_KEY_ENV],
    needs: (ctx) =>
      authzNeeds(ctx, {
        keyEnv: [GRANT_KEY_ENV, DECISION_KEY_ENV],
        extraRead: [teamDirOf(ctx)],
        grants: true,
      }),
    run: async (ctx) => (await loadCode(() => import("./grant_cmd.ts"))).grantVerify(ctx),
  },
  {
    words: ["decision", "sign"],
    summary:
      "sign and append a decision row (HMAC with AGENTTEAMS_DECISION_SIGNING_KEY, or --ed25519)",
    help: "Appends to references/security-decisions.log.csv (created on first use), chained to\n" +
      "the last row. --verdict is PASS, CONDITIONAL PASS, HALT or HALT-RETRACTED (which needs\n" +
      "--evidence). The author (--owner, default @security) must be on the roster.",
    positionals: [],
    flags: [
      { name: "action", kind: "string", value: "ACTION", help: "the action id" },
      {
        name: "verdict",
        kind: "string",
        value: "V",
        help: "PASS, CONDITIONAL PASS, HALT, HALT-RETRACTED",
      },
      { name: "owner", kind: "string", value: "NAME", help: "the author (default @security)" },
      { name: "plan", kind: "string", value: "SLUG", help: "the plan slug" },
      { name: "step", kind: "string", value: "N", help: "the plan step" },
      {
        name: "conditions",
        kind: "string",
        value: "TEXT",
        help: "conditions of a CONDITIONAL PASS",
      },
      { name: "conditions-verified", kind: "string", value: "V", help: "verified or pending" },
      { name: "evidence", kind: "string", value: "TEXT", help: "evidence (a retraction needs it)" },
      { name: "ed25519", kind: "bool", help: "sign with the operator's Ed25519 key (keys init)" },
    ],
    env: [DECISION_KEY_ENV, ...KEY_ENV],
    // The ledger key and the state dir too: the write keeps the ledger's index for the gate.
    needs: (ctx) =>
      mergeNeeds(
        authzNeeds(ctx, {
          write: true,
          keyEnv: [DECISION_KEY_ENV, ...KEY_ENV],
          operatorKey: ctx.parsed.flags.ed25519 === true,
        }),
        keyNeeds(ctx),
        stateNeeds(ctx, true),
      ),
    run: async (ctx) => (await loadCode(() => import("./clearance_cmd.ts"))).decisionSign(ctx),
  },
  {
    words: ["decision", "verify"],
    summary: "verify the decision log: the chain and each authorizing row (read-only)",
    positionals: [],
    flags: [],
    env: [DECISION_KEY_ENV, ...TRUST_ENV],
    needs: (ctx) => authzNeeds(ctx, { keyEnv: [DECISION_KEY_ENV] }),
    run: async (ctx) => (await loadCode(() => import("./clearance_cmd.ts"))).decisionVerify(ctx),
  },
  {
    words: ["decision", "accept"],
    summary: "after a verify that passes, hold the gate to the decision log as it is now",
    help: "Verifies the decision log (as decision verify); when it verifies, keeps the log's\n" +
      "index, so the gate holds the file to these bytes: what LEDGER_ROLLED_BACK asks for after\n" +
      "the operator changed the log by hand. Needs the proposal-ledger key.",
    positionals: [],
    flags: [],
    env: [DECISION_KEY_ENV, ...TRUST_ENV, ...KEY_ENV],
    needs: (ctx) =>
      mergeNeeds(
        authzNeeds(ctx, { keyEnv: [DECISION_KEY_ENV] }),
        keyNeeds(ctx),
        stateNeeds(ctx, true),
      ),
    run: async (ctx) => (await loadCode(() => import("./clearance_cmd.ts"))).decisionAccept(ctx),
  },
  {
    words: ["clearance", "check"],
    summary: "report what a clearance would do for ACTION, consuming nothing",
    positionals: [{ name: "ACTION", required: true }],
    flags: [],
    env: [DECISION_KEY_ENV, ...TRUST_ENV],
    needs: (ctx) => authzNeeds(ctx, { keyEnv: [DECISION_KEY_ENV] }),
    run: async (ctx) => (await loadCode(() => import("./clearance_cmd.ts"))).clearanceCheck(ctx),
  },
  {
    words: ["gate"],
    summary: "the destructive gate: HALT first, then a clearance, then a waiver (exit 0/1)",
    help: "Read-only unless --consume, which spends the clearance or waiver that allowed ACTION\n" +
      "and records a gate-pass row in the proposal ledger. No instrument lifts a HALT.",
    positionals: [{ name: "ACTION", required: true }],
    flags: [{ name: "consume", kind: "bool", help: "spend what allowed it; record it" }],
    env: [DECISION_KEY_ENV, WAIVER_KEY_ENV, ...KEY_ENV],
    needs: (ctx) => {
      const consume = ctx.parsed.flags.consume === true;
      const base = authzNeeds(ctx, {
        write: consume,
        keyEnv: [DECISION_KEY_ENV, WAIVER_KEY_ENV, ...KEY_ENV],
        // A spend of an Ed25519 waiver re-signs it with the operator's key from the key dir.
        operatorKey: consume,
      });
      // The ledger either way: what was spent is counted from its gate-pass rows.
      return mergeNeeds(base, keyNeeds(ctx), stateNeeds(ctx, consume));
    },
    run: async (ctx) => (await loadCode(() => import("./gate_cmd.ts"))).gate(ctx),
  },
  {
    words: ["init"],
    summary: "switch the project on: brief, session settings, .gitignore, reference file; " +
      "then what audit --fix would change",
    help:
      "Shows each change before it makes it; --dry-run only shows. The brief names the agents\n" +
      "the project's agent files define; the Claude Code settings get exactly the deny rules\n" +
      "doctor requires, merged without losing yours (a settings file with comments, or not\n" +
      "JSON, is refused, never rewritten); .gitignore gets the runner's folders. An existing\n" +
      "brief or reference file is never overwritten, unless --force, which backs it up first\n" +
      "(<file>.bak). Writes are atomic and through no link. A second run changes nothing.",
    positionals: [],
    flags: [
      { name: "dry-run", kind: "bool", help: "show every change, make none" },
      { name: "force", kind: "bool", help: "replace a brief that differs (backed up first)" },
    ],
    env: INIT_ENV,
    // The project (read; written unless --dry-run, through the anchored write's Perl), --brief.
    needs: (ctx) => {
      const dry = ctx.parsed.flags["dry-run"] === true;
      return {
        ...NO_NEEDS,
        read: [ctx.project, ...parentAgentLooks([ctx.project]), ...briefFlagReads(ctx)],
        write: dry ? [] : [ctx.project],
        run: dry ? [] : [PERL_PATH],
      };
    },
    run: async (ctx) => (await loadCode(() => import("./init_cmd.ts"))).init(ctx),
  },
  {
    words: ["doctor"],
    summary: "what serve checks before it serves (key, sandbox, brief, session settings); " +
      "exit 1 on an error",
    help: "Each check prints one line: ok, warning or error. Missing Claude Code settings rules\n" +
      "are warnings, with the lines to add below them. Nothing is written; the key file is read\n" +
      "for its custody and never printed.",
    positionals: [],
    flags: [],
    env: DOCTOR_ENV,
    // The project (brief, .claude/ settings), --brief, the key dir (custody reads the key file),
    // and the sandbox probe: bwrap runs, perl (the exec guard) is looked at; sandbox-exec on macOS.
    needs: async (ctx) => {
      // The probe's own list, loaded with it (the sandbox's modules stay off every start-up).
      const probe = (await loadCode(() => import("../sandbox/host_probe.ts"))).probePrograms();
      return mergeNeeds(keyNeeds(ctx), hostSettingsNeeds(ctx), {
        ...NO_NEEDS,
        read: [ctx.project, ...briefFlagReads(ctx), ...probe.read],
        run: probe.run,
      });
    },
    run: async (ctx) => (await loadCode(() => import("./doctor_cmd.ts"))).doctor(ctx),
  },
  {
    words: ["permissions"],
    summary: "print the narrowest `deno run` flags for a command on this project",
    help: "COMMAND is the command with its own arguments and flags, as you would run it:\n" +
      "  agentteams permissions run request.json --unconfined\n" +
      "The line starts with this Deno's absolute path and needs no quoting, so both\n" +
      '  eval "$(agentteams permissions ledger verify)"   and   $(agentteams permissions ledger verify)\n' +
      "run it (the second only while no path in it holds a space). --json prints it as an `exec` array\n" +
      "too. A `--` after COMMAND's words still works; --json and --help are permissions' own.\n" +
      "Launched broad on purpose? AGENTTEAMS_BROAD_OK=1 silences the warning.",
    positionals: [{ name: "COMMAND", required: true, variadic: true, rest: true }],
    flags: [],
    env: [...KEY_ENV, ...CHILD_ENV, ...GIT_CONFIG_ENV],
    // To compute another command's needs it reads what that command reads (its brief, its
    // artifact, the operator's confined-programs file, whose custody check asks for the uid, and
    // the PATH directories programs are resolved in).
    needs: async (ctx) =>
      mergeNeeds({
        ...NO_NEEDS,
        read: [ctx.project, ...confinedDirs(ctx), ...briefFlagReads(ctx)],
        sys: ["uid"],
      }, await (await loadCode(() => import("./permissions_cmd.ts"))).targetReads(ctx, TABLE)),
    run: async (ctx) =>
      (await loadCode(() => import("./permissions_cmd.ts"))).permissionsCmd(ctx, TABLE),
  },
  {
    words: ["mcp", "readfs"],
    summary: "a stdio MCP server of reading tools (read_file list_dir find grep stat) for agents",
    help: "Serves MCP (JSON-RPC 2.0, one message a line) on stdin/stdout until stdin closes.\n" +
      "Paths are relative to the root (--root, default the project); outside it, links leaving\n" +
      "it, the control plane and the key dir are refused as tool errors. It writes nothing: see\n" +
      "`agentteams permissions mcp readfs`. Wiring it into Claude Code, Goose, Codex: docs/mcp.md.",
    positionals: [],
    flags: [{
      name: "root",
      kind: "string",
      value: "DIR",
      help: "the directory served (default: the project)",
    }],
    env: ["HOME", "AGENTTEAMS_KEY_DIR"],
    // The root, read only; HOME and AGENTTEAMS_KEY_DIR to know where the key dir is (refused,
    // never read).
    needs: async (ctx) => ({
      ...NO_NEEDS,
      read: [(await loadCode(() => import("./mcp_cmd.ts"))).readfsRootOf(ctx)],
    }),
    run: async (ctx) => (await loadCode(() => import("./mcp_cmd.ts"))).mcpReadfs(ctx),
  },
  {
    words: ["mcp", "runner"],
    summary: "a stdio MCP server that turns one agent's tool calls into runner requests",
    help: "Serves MCP on stdin/stdout until stdin closes: run_command queues a command request\n" +
      "on the tool-server channel (.agentteams-queue/mcp-requests/) with via_agent = --agent and\n" +
      "returns the runner's authenticated result; request_status fetches one that took longer.\n" +
      "It holds no key: of the key dir it reads only the runner's public key. See docs/mcp.md.",
    positionals: [],
    flags: [{ name: "agent", kind: "string", value: "SLUG", help: "the agent it speaks for" }],
    env: ["HOME", "AGENTTEAMS_KEY_DIR"],
    // The queue (written: requests, acks), the status folder (results, liveness), the runner's
    // public key file alone, and the uid its custody check compares.
    needs: (ctx) => {
      const q = queuePaths(ctx.project);
      return {
        ...NO_NEEDS,
        read: [q.queue, q.status, join(keyDir(ctx.env), RUNNER_SEAL_PUB_FILE)],
        write: [q.queue],
        sys: ["uid"],
      };
    },
    run: async (ctx) => (await loadCode(() => import("./mcp_cmd.ts"))).mcpRunner(ctx),
  },
  {
    words: ["mcp", "grant", "issue"],
    summary: "sign an operator direct-write grant for an agent's tool-server writes " +
      "(~/.config/agentteams/mcp-grants/)",
    help: "Without a verified grant, every write_file of the agent is staged for the\n" +
      "orchestrator, whatever the brief's mcp_grants say. The grant binds the brief's\n" +
      'mcp_grants.<agent> tools (approval "direct"), the agent\'s write scopes (give each again\n' +
      "with --scope), every gate's definition and this build's runner server; any change voids\n" +
      "it. At most 3 active grants, 30 days, 500 writes. The runner pins the file: restart\n" +
      "agentteams serve after issuing. Not `grant issue` (the triad's capability grants).",
    positionals: [],
    flags: [
      { name: "agent", kind: "string", value: "SLUG", help: "the agent the grant is for" },
      {
        name: "scope",
        kind: "string",
        value: "DIR",
        repeat: true,
        help: "each of the agent's write scopes in the brief (all of them)",
      },
      {
        name: "key",
        kind: "string",
        value: "PEM",
        help: "the operator's Ed25519 private key (default: the key dir's, from keys init)",
      },
      {
        name: "key-id",
        kind: "string",
        value: "ID",
        help: "the verify key's id (default: its own)",
      },
      { name: "days", kind: "string", value: "N", help: "days until it expires (1-30, default 7)" },
      {
        name: "max-writes",
        kind: "string",
        value: "N",
        help: "direct writes it allows (1-500, default 50)",
      },
      { name: "id", kind: "string", value: "ID", help: "the grant id (default MG-<12 hex>)" },
      { name: "replace", kind: "bool", help: "drop the agent's other grants from the file" },
    ],
    env: [...KEY_ENV],
    // The brief, the signing key (the flag's file or the key dir), and the operator's grants
    // and verify-key folders, written.
    needs: (ctx) => {
      const key = ctx.parsed.flags.key;
      return mergeNeeds(
        typeof key === "string" ? { ...NO_NEEDS, read: [resolve(key)] } : keyNeeds(ctx),
        {
          ...NO_NEEDS,
          read: [
            ctx.project,
            ...confinedDirs(ctx),
            ...briefFlagReads(ctx),
            ...directGrantDirs(ctx),
          ],
          write: directGrantDirs(ctx),
          sys: ["uid"],
        },
      );
    },
    run: async (ctx) => (await loadCode(() => import("./mcp_grant_cmd.ts"))).mcpGrantIssue(ctx),
  },
  {
    words: ["mcp", "grant", "list"],
    summary: "list the operator's direct-write grants of the project, each checked against " +
      "the brief now",
    positionals: [],
    flags: [],
    env: ["HOME"],
    needs: (ctx) => ({
      ...NO_NEEDS,
      read: [ctx.project, ...confinedDirs(ctx), ...briefFlagReads(ctx), ...directGrantDirs(ctx)],
      sys: ["uid"],
    }),
    run: async (ctx) => (await loadCode(() => import("./mcp_grant_cmd.ts"))).mcpGrantList(ctx),
  },
  {
    words: ["brief", "check"],
    summary: "check the brief (its shape and its lint), every problem at once; exit 1 on any",
    positionals: [],
    flags: [],
    env: [],
    // The brief (the --brief file, or the project's default names) and the project's literal
    // write scopes, whose being directories the warnings ask about.
    needs: (ctx) => ({ ...NO_NEEDS, read: [ctx.project, ...briefFlagReads(ctx)] }),
    run: async (ctx) => (await loadCode(() => import("./brief_cmd.ts"))).briefCheck(ctx),
  },
  {
    words: ["release", "sign"],
    summary: "sign a release's SHA256SUMS (minisign format, Ed25519, pre-hashed)",
    help: "DIR holds the release's files and SHA256SUMS (scripts/release_sums.ts writes it).\n" +
      "Every listed file is checked against its SHA-256 first; then DIR/SHA256SUMS.minisig is\n" +
      "written. KEY is a PKCS#8 PEM Ed25519 private key (keys init makes one); `minisign -V\n" +
      "-p PUB -m DIR/SHA256SUMS` verifies the result (PUB from release pubkey).",
    positionals: [{ name: "DIR", required: true }],
    flags: [{ name: "key", kind: "string", value: "FILE", help: "the Ed25519 private key (PEM)" }],
    env: [],
    needs: (ctx) => releaseNeeds(ctx, ["key"], true),
    run: async (ctx) => (await loadCode(() => import("./release_cmd.ts"))).releaseSign(ctx),
  },
  {
    words: ["release", "verify"],
    summary: "verify a release: SHA256SUMS.minisig under a minisign public key, then each file",
    help: "PUB is a minisign public key file (minisign -G writes one; so does release pubkey).\n" +
      "Pre-hashed (ED) and legacy (Ed) signatures verify. Nothing is written.",
    positionals: [{ name: "DIR", required: true }],
    flags: [{ name: "pubkey", kind: "string", value: "FILE", help: "the minisign public key" }],
    env: [],
    needs: (ctx) => releaseNeeds(ctx, ["pubkey"], false),
    run: async (ctx) => (await loadCode(() => import("./release_cmd.ts"))).releaseVerify(ctx),
  },
  {
    words: ["release", "pubkey"],
    summary: "print (or --out) the minisign public key of a PEM Ed25519 signing key",
    positionals: [],
    flags: [
      { name: "key", kind: "string", value: "FILE", help: "the Ed25519 private key (PEM)" },
      { name: "out", kind: "string", value: "FILE", help: "write it here (default: stdout)" },
    ],
    env: [],
    needs: (ctx) => {
      const out = ctx.parsed.flags.out;
      const dirs = typeof out === "string" ? [dirname(resolve(out))] : [];
      return mergeNeeds(releaseNeeds(ctx, ["key"], false), {
        ...NO_NEEDS,
        read: dirs,
        write: dirs,
      });
    },
    run: async (ctx) => (await loadCode(() => import("./release_cmd.ts"))).releasePubkey(ctx),
  },
  {
    words: ["schema"],
    summary: "print the JSON Schema of an artifact (change-proposal, delete-proposal, " +
      "command-request) or of the brief (brief)",
    positionals: [{ name: "NAME", required: false }],
    flags: [],
    env: [],
    needs: () => NO_NEEDS,
    run: async (ctx) => (await loadCode(() => import("./schema_cmd.ts"))).schema(ctx),
  },
];

/**
 * Everything a command needs from Deno: its own needs plus reading the program's code, which its
 * modules are loaded from on first use.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { findCommand, needsOf } from "./commands.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams ledger show` in project /p
 * (await needsOf(findCommand(["ledger", "show"])!.spec, ctx)).read;
 * // ["/p/.agentteams", "<code dir>"], sorted (codeDir(): lib/ in the source tree)
 * ```
 */
export async function needsOf(spec: CommandSpec, ctx: Ctx): Promise<Needs> {
  return mergeNeeds(await spec.needs(ctx), commonNeeds(spec));
}

/**
 * What every command needs beside its own needs: its code's directory read, and its variables
 * (stated once, as its `env`: read at start and granted here).
 */
function commonNeeds(spec: CommandSpec): Needs {
  return { ...NO_NEEDS, read: [codeDir()], env: spec.env };
}

/**
 * The categories a command needs in `ctx`, which its start keeps (revoking the rest): its
 * {@link CommandSpec.categories} when it states them and read is granted wholesale (then working
 * the lists out could refuse nothing: a narrow launch's early `NOT_CAPABLE` comes from their
 * reads), else those of {@link needsOf}, worked out in full.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { findCommand, neededOf } from "./commands.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams run r.json` launched with -A, in direct mode
 * await neededOf(findCommand(["run"])!.spec, ctx); // ["read", "write", "run", "env", "sys"]
 * ```
 */
export async function neededOf(spec: CommandSpec, ctx: Ctx): Promise<readonly Category[]> {
  if (
    spec.categories === undefined ||
    Deno.permissions.querySync({ name: "read" }).state !== "granted"
  ) {
    return neededCategories(await needsOf(spec, ctx));
  }
  const stated = new Set<Category>([
    ...await spec.categories(ctx),
    ...neededCategories(commonNeeds(spec)),
  ]);
  return CATEGORIES.filter((c) => stated.has(c));
}

/**
 * Finds the command named by the leading words of argv (longest match first).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findCommand } from "./commands.ts";
 * assert.deepEqual(findCommand(["ledger", "verify", "--json"])?.spec.words, ["ledger", "verify"]);
 * ```
 */
export function findCommand(
  argv: readonly string[],
): { spec: CommandSpec; rest: string[] } | null {
  // A group word alone (`ledger`) is no command: its subcommand is missing.
  let best: CommandSpec | null = null;
  for (const c of COMMANDS) {
    if (c.words.every((w, i) => argv[i] === w)) {
      if (best === null || c.words.length > best.words.length) best = c;
    }
  }
  return best === null ? null : { spec: best, rest: argv.slice(best.words.length) };
}

/** The table as the commands that ask about other commands (`permissions`) are handed it. */
const TABLE: CommandTable = { find: findCommand, needsOf };

/**
 * Why `argv` names no command, for a person: the unknown words, and the nearest command when it
 * looks like a typo (`ledger verfy` → `ledger verify`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unknownCommandMessage } from "./commands.ts";
 * assert.equal(
 *   unknownCommandMessage(["ledger", "verfy"]),
 *   'unknown command "ledger verfy" (did you mean "ledger verify"?); see agentteams ledger --help',
 * );
 * ```
 */
export function unknownCommandMessage(argv: readonly string[]): string {
  const members = COMMANDS.filter((c) => c.words.length > 1 && c.words[0] === argv[0]);
  const isGroup = members.length > 0;
  if (isGroup && (argv.length === 1 || argv[1].startsWith("-"))) {
    return `${JSON.stringify(argv[0])} needs a command: ` +
      `${members.map((c) => c.words.join(" ")).join(", ")} (see agentteams ${argv[0]} --help)`;
  }
  const typed = (isGroup ? argv.slice(0, 2) : argv.slice(0, 1)).join(" ");
  const names = COMMANDS.map((c) => c.words.join(" "));
  const near = didYouMean(typed, names);
  const hint = near === null ? "" : ` (did you mean ${JSON.stringify(near)}?)`;
  const help = isGroup ? `agentteams ${argv[0]} --help` : "agentteams --help";
  return `unknown command ${JSON.stringify(typed)}${hint}; see ${help}`;
}
