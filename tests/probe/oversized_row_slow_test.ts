/**
 * Probe finding G: a command request whose `argv` makes the write-ahead row larger than 1 MiB is
 * refused with a use spent and no ledger row at all.
 *
 * Nothing bounds `argv` as a whole before the row is built: the schema takes 1024 arguments of
 * up to 16 384 characters, the artifact may be 2 MiB, and the `run-request-start` row carries the
 * whole argv (unlike `purpose`, which `ledgerText` cuts). Canonical JSON escapes non-ASCII as
 * `\uXXXX`, so even a smaller artifact of non-ASCII arguments grows past the cap. So every check passes,
 * a use is spent, and `appendRow` refuses the row (`LEDGER_ROW_TOO_LARGE`). That error belongs to
 * the `ledger` family, which `performAct` never records a refusal for (meant for a tampered
 * ledger, where no row can be trusted): the act leaves an attempt and a use in the dispatch store
 * and nothing in the ledger. `ledger verify` is content (only *more* acts than uses is flagged).
 * An agent can so spend its uses, and make requests vanish from the record, at will.
 *
 * Expected: the request is refused before a use is spent (an argv too large to record), with a
 * `run-request-refused` row, as every other refusal outside a dry run is.
 */
import assert from "node:assert/strict";
import { readDispatchStore, withWorld, workerBrief } from "../e2e/_run_helpers.ts";

Deno.test("probe G: an argv too large for its row is refused and recorded, no use spent", async () => {
  await withWorld("probe-big-argv", {
    brief: (p) => workerBrief(p, [{ prefix: ["echo"], args: ["[a-z]+"], variadic: true }]),
  }, async (w) => {
    const nonce = await w.dispatch();
    const uses = () => readDispatchStore(w.project).filter((r) => typeof r.use === "string").length;
    const usesBefore = uses();
    // 100 arguments of 12 000 letters (the schema takes 1024 of up to 16 384): a 1.2 MB artifact,
    // well under its 2 MiB cap, and a row over 1 MiB.
    const argv = ["echo", ...Array.from({ length: 100 }, () => "a".repeat(12_000))];
    const r = await w.run({ argv }, { nonce, flags: ["--json"] });
    const added = w.rows().slice(r.rowsBefore);
    const spent = uses() - usesBefore;
    await w.verifyOk();
    const out = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as {
      error?: { code?: string };
    };
    assert.deepEqual(
      {
        exit: r.code,
        rows: added.map((x) => x.action),
        usesSpent: spent,
      },
      { exit: 1, rows: ["run-request-refused"], usesSpent: 0 },
      `code ${out.error?.code}; rows ${JSON.stringify(added.map((x) => x.action))}; ` +
        `uses spent ${spent}\n${r.stderr.slice(0, 500)}`,
    );
  });
});

/**
 * The same cap on the completion row: a command that writes enough undeclared files with long
 * names makes its `run-request` row (which lists every undeclared write) larger than 1 MiB. The
 * append fails after the act started, so the start row stands alone: the exit code and every
 * undeclared write go unrecorded, when the agent chooses. Expected: the completion row is
 * recorded (the list bounded, with a count), and the run exits 3.
 */
Deno.test("probe G: a run's completion row is recorded however many undeclared writes it has", async () => {
  await withWorld("probe-big-completion", {
    brief: (p) => workerBrief(p, [{ prefix: ["perl", "src/spray.pl"], args: [] }]),
  }, async (w) => {
    const script = `
use strict;
mkdir "src/o";
for my $i (1 .. 6000) {
  my $n = sprintf("src/o/%05d-%s", $i, "x" x 200);
  open(my $f, ">", $n) or die "$n: $!"; close $f;
}
`;
    const nonce = await w.dispatch();
    const file = `${w.scratch}/spray.json`;
    await Deno.writeTextFile(
      file,
      JSON.stringify({
        kind: "change-proposal",
        dispatch: nonce,
        path: "src/spray.pl",
        base_sha256: "absent",
        content: script,
        rationale: "probe",
      }),
    );
    const a = await w.cli(["apply", file, "--project", w.project, "--json"]);
    assert.equal(a.code, 0, a.stderr);
    const r = await w.run({ argv: ["perl", "src/spray.pl"] }, { nonce, flags: ["--json"] });
    const rows = w.rows().slice(r.rowsBefore);
    const added = rows.map((x) => x.action);
    await w.verifyOk();
    // As many undeclared writes as fit the line limit, and how many there were.
    const done = rows.at(-1) as Record<string, unknown>;
    assert.equal(done.undeclared_writes_total, 6000); // the 6000 files (git lists files)
    assert.ok((done.undeclared_writes as string[]).length > 0);
    assert.ok((done.undeclared_writes as string[]).length < 6000);
    assert.deepEqual(
      { exit: r.code, rows: added },
      { exit: 3, rows: ["run-request-start", "run-request"] },
      `rows ${JSON.stringify(added)}\n${r.stderr.slice(0, 400)}`,
    );
  });
});
