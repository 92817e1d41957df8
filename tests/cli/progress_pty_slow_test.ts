/**
 * The progress line (issue 27 item 5) through a real pseudo-terminal (python3's standard `pty`
 * module): `audit`, `ledger verify` and `init` draw it on a terminal (count and rate, each draw
 * over the last, the line cleared before the command's own output), and never with `--json`,
 * in CI (`CI=true`) or into a pipe. The pure parts are tests/cli/progress_test.ts's. Slow: a
 * few dozen whole processes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLEAR_LINE } from "../../lib/cli/terminal.ts";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { appendRow } from "../../lib/ledger/append.ts";
import { baseChildEnv, DENO, MAIN_TS, runCli, type Sandbox, sandbox } from "../_helpers/mod.ts";

const PYTHON = "/usr/bin/python3";

/** Runs argv on a pseudo-terminal (stdin, stdout and stderr all the pty); returns what it drew. */
const PTY_RUN = String.raw`
import os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    r, _, _ = select.select([fd], [], [], 120)
    if not r:
        break
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
`;

/** The CLI on a pty, in a clean environment plus `env`. */
async function onPty(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(PYTHON, {
    args: ["-c", PTY_RUN, DENO, "run", "-A", MAIN_TS, ...args],
    clearEnv: true,
    env: { ...baseChildEnv(), TERM: "xterm", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const err = new TextDecoder().decode(r.stderr);
  assert.equal(err, "", `the pty runner itself failed: ${err}`);
  return { code: r.code, out: new TextDecoder().decode(r.stdout) };
}

/**
 * The progress draws in `out`: `\r\x1b[K`, the text, and the next draw's or the final clear's
 * `\r\x1b[K` (the command's own output after the clear ends its lines in `\r\n` instead).
 */
function draws(out: string, label: string): string[] {
  const re = new RegExp(`\\r\\x1b\\[K(${label}: [^\\r\\n\\x1b]*)(?=\\r\\x1b\\[K)`, "g");
  return [...out.matchAll(re)].map((m) => m[1]);
}

/** Asserts the line was drawn, reads as count and rate, and was cleared before `after`. */
function assertDrawnAndCleared(out: string, label: string, unit: string, after: RegExp): void {
  const seen = draws(out, label);
  assert.ok(seen.length >= 1, `no progress line drawn: ${JSON.stringify(out)}`);
  for (const d of seen) {
    assert.match(d, new RegExp(`^${label}: [\\d,]+ ${unit}( \\([\\d,]+/s\\))?$`), d);
  }
  const lastDraw = out.lastIndexOf(`\r\x1b[K${seen[seen.length - 1]}`);
  const clear = out.indexOf(CLEAR_LINE, lastDraw + 1);
  assert.ok(clear > lastDraw, `the line is cleared after its last draw: ${JSON.stringify(out)}`);
  const m = after.exec(out.slice(clear + CLEAR_LINE.length));
  assert.ok(
    m !== null,
    `the command's own output follows the cleared line: ${JSON.stringify(out)}`,
  );
}

/** A project with a 600-file Claude team, keys, a ledger of 40 rows and a brief (switch off). */
async function bigProject(prefix: string, fn: (sb: Sandbox) => Promise<void>): Promise<void> {
  const sb = await sandbox(prefix);
  try {
    const agents = join(sb.project, ".claude", "agents");
    await Deno.mkdir(agents, { recursive: true });
    for (let i = 0; i < 600; i++) {
      await Deno.writeTextFile(
        join(agents, `a${i}.md`),
        `---\nname: a${i}\ndescription: d\ntools: Read, Grep, Glob\n---\nBody.\n\n` +
          "## Write Policy: Return Proposals, Never Write\n",
      );
    }
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const key = loadLedgerKey({ env: sb.env, mode: "direct" });
    for (let i = 0; i < 40; i++) await appendRow(sb.project, key.hmac, { action: "note", i });
    await fn(sb);
  } finally {
    await sb.dispose();
  }
}

Deno.test("on a pseudo-terminal audit, ledger verify and init draw the progress line and clear it; with --json or CI=true none is drawn", async () => {
  await bigProject("progress-pty", async (sb) => {
    const p = ["--project", sb.project];
    const audit = await onPty(["audit", ...p], sb.env);
    assert.equal(audit.code, 0, audit.out);
    assertDrawnAndCleared(audit.out, "audit", "files", /^audit: 600 agent file\(s\)/m);

    const verify = await onPty(["ledger", "verify", ...p], sb.env);
    assert.equal(verify.code, 0, verify.out);
    assertDrawnAndCleared(verify.out, "ledger verify", "rows", /ok: 40 rows/);

    const init = await onPty(["init", "--dry-run", ...p], sb.env);
    assert.equal(init.code, 0, init.out);
    assertDrawnAndCleared(init.out, "init", "files", /^would create agentteams\.jsonc: /m);

    for (
      const [args, env] of [
        [["audit", "--json", ...p], sb.env],
        [["audit", "--format", "sarif", ...p], sb.env],
        [["audit", ...p], { ...sb.env, CI: "true" }],
        [["ledger", "verify", "--json", ...p], sb.env],
        [["ledger", "verify", ...p], { ...sb.env, CI: "true" }],
        [["init", "--dry-run", "--json", ...p], sb.env],
      ] as [string[], Record<string, string>][]
    ) {
      const r = await onPty(args, env);
      assert.equal(r.code, 0, r.out);
      assert.ok(!r.out.includes("\x1b[K"), `${args.join(" ")} drew: ${JSON.stringify(r.out)}`);
    }
  });
});

Deno.test("into a pipe (no terminal) audit, ledger verify and init write no progress line", async () => {
  await bigProject("progress-pipe", async (sb) => {
    const p = ["--project", sb.project];
    for (const args of [["audit", ...p], ["ledger", "verify", ...p], ["init", "--dry-run", ...p]]) {
      const r = await runCli(args, { env: { ...sb.env, TERM: "xterm" } });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!(r.stdout + r.stderr).includes("\x1b[K"), `${args[0]}: ${r.stderr}`);
      assert.ok(!(r.stdout + r.stderr).includes("\r"), `${args[0]}: ${r.stderr}`);
    }
  });
});
