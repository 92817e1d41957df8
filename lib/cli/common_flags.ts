/**
 * Flags more than one command takes: the common ones every command accepts, and `--unconfined`.
 *
 * @module
 */
import type { FlagSpec } from "./args.ts";

/** The operator's explicit, recorded opt-out of the sandbox. */
export const UNCONFINED_FLAG: FlagSpec = {
  name: "unconfined",
  kind: "bool",
  help: "run gates and commands outside the sandbox (needs allow_unconfined_runs; recorded)",
};

/** Flags every command accepts. */
export const COMMON_FLAGS: readonly FlagSpec[] = [
  {
    name: "project",
    kind: "string",
    value: "DIR",
    help: "the project root (default: the nearest directory from . up holding .agentteams/, " +
      "agentteams.jsonc, agentteams.json or .git; else .)",
  },
  {
    name: "brief",
    kind: "string",
    value: "FILE",
    help: "the brief (alias --description; default <project>/agentteams.jsonc, then .json)",
  },
  { name: "json", kind: "bool", help: "print one JSON object on stdout" },
  { name: "help", kind: "bool", help: "show this help" },
];

/** The acting commands' queue-mode flags (`dispatch`, `apply`, `run`, `ledger verify`). */
export const QUEUE_FLAGS: readonly FlagSpec[] = [
  {
    name: "wait-timeout",
    kind: "string",
    value: "S",
    help: "in queue mode, wait this many seconds for the runner's result (default 120)",
  },
  {
    name: "direct",
    kind: "bool",
    help: "act here with the key, even under orchestrator-only (the operator or CI, outside " +
      "every agent session)",
  },
];
