/**
 * A small signed project state written by the real code (issueDispatch + appendRow), shared by
 * the ledger tests: 6 rows (one `issue-dispatch`, five notes, one with non-ASCII text) and a
 * dispatch store with one dispatch. Built once per test module, copied per case. Also the ledger
 * tests' shared sandbox and refusal helpers.
 *
 * @module
 */
import { join } from "node:path";
import { appendRow } from "../../lib/ledger/append.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import {
  copyTree,
  keyOf,
  removeTree,
  type Sandbox,
  sandbox,
  snapshotTree,
  stateFiles,
  tempDir,
} from "../_helpers/mod.ts";
import type { VerifyKey } from "../../lib/ledger/verify.ts";
import { assertRefusal, assertSameTree, type RefusalClass } from "../_helpers/assert.ts";
import type { AgentTeamsError } from "../../lib/errors.ts";

/** The key text of the fixture (`AGENTTEAMS_PROPOSAL_LEDGER_KEY` for CLI runs). */
export const FIXTURE_KEY_TEXT = "fixture-ledger-key";
/** The fixture key. */
export const FIXTURE_KEY: VerifyKey = keyOf(FIXTURE_KEY_TEXT);
/** The fixture's clock. */
export const FIXTURE_NOW = new Date(Date.UTC(2026, 10, 29, 18, 2, 10));

/** The fixture's files, read back. */
export interface Fixture {
  /** A project holding the state (do not modify: copy it). */
  project: string;
  /** Ledger lines. */
  lines: string[];
  /** Head text. */
  head: string;
  /** Dispatch store text. */
  dispatches: string;
  /** The dispatch nonce issued. */
  nonce: string;
}

let built: Promise<Fixture> | null = null;

/** Builds the fixture once per module. */
export function fixture(): Promise<Fixture> {
  built ??= (async () => {
    const dir = await tempDir("fixture");
    const project = join(dir, "project");
    await Deno.mkdir(project);
    const now = () => FIXTURE_NOW;
    const { nonce } = await issueDispatch(project, FIXTURE_KEY.hmac, "worker", { now });
    for (let i = 2; i <= 6; i++) {
      await appendRow(project, FIXTURE_KEY.hmac, {
        action: "note",
        n: i,
        text: i === 4 ? 'caf\u00e9 \u{1f600} "q" \\ \t' : `row ${i}`,
      }, { now });
    }
    const p = stateFiles(project);
    const text = await Deno.readTextFile(p.ledger);
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch { /* already gone */ }
    });
    return {
      project,
      lines: text.split("\n").slice(0, -1),
      head: await Deno.readTextFile(p.head),
      dispatches: await Deno.readTextFile(p.dispatches),
      nonce,
    };
  })();
  return built;
}

/** Copies the fixture project into `dst` (a new directory). */
export async function copyFixture(dst: string): Promise<Fixture> {
  const f = await fixture();
  await removeTree(dst);
  await copyTree(f.project, dst);
  return { ...f, project: dst };
}

/** Runs `fn` in a fresh sandbox, disposed afterwards. */
export async function withSandbox(name: string, fn: (sb: Sandbox) => Promise<void>): Promise<void> {
  const sb = await sandbox(name);
  try {
    await fn(sb);
  } finally {
    await sb.dispose();
  }
}

/** Asserts `fn` refuses with `code` (and `ctor`, when given) and leaves the sandbox byte-identical. */
export async function refuses(
  sb: Sandbox,
  fn: () => unknown,
  code: string,
  ctor?: RefusalClass<AgentTeamsError>,
): Promise<void> {
  const before = await snapshotTree(sb.dir);
  await assertRefusal(fn, code, ctor);
  assertSameTree(before, await snapshotTree(sb.dir), code);
}
