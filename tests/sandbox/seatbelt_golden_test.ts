/** Golden tests: the Seatbelt profile text and the sandbox-exec argv. */

import fc from "../_helpers/fc.ts";
import { SandboxError } from "../../lib/errors.ts";
import {
  type ConfinementPlan,
  seatbeltArgv,
  type SeatbeltPlan,
  seatbeltProfile,
} from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

const PLAN: SeatbeltPlan = {
  sandboxExec: "/usr/bin/sandbox-exec",
  project: "/Users/op/p",
  tmpdir: "/private/var/folders/xy/T/agentteams-run-1",
  writeRoots: ["/Users/op/p/build"],
  readOnly: ["/Users/op/p/build/vendor/.git"],
  masks: ["/Users/op/p/build/locked"],
  hidden: ["/Users/op/.config/agentteams/keys"],
  exec: ["/usr/bin", "/Users/op/.elan"],
  network: false,
  cwd: "/Users/op/p",
  env: [["PATH", "/usr/bin:/bin"], ["TMPDIR", "/private/var/folders/xy/T/agentteams-run-1"]],
  argv: ["/Users/op/.elan/bin/lake", "build"],
};

const PROFILE = `(version 1)
(allow default)
(deny file-write*)
(allow file-write*
    (subpath (param "TMPDIR"))
    (subpath (param "WRITE_ROOT_0"))
    (literal "/dev/null")
    (literal "/dev/zero")
    (literal "/dev/stdout")
    (literal "/dev/stderr")
    (literal "/dev/tty")
    (literal "/dev/dtracehelper")
)
(deny file-write*
    (literal (param "PROJECT"))
    (subpath (param "READ_ONLY_0"))
    (subpath (param "READ_ONLY_1"))
    (subpath (param "HIDDEN_0"))
    (regex #"/\\.[Gg][Ii][Tt](/|$)")
    (regex #"/\\.[Cc][Ll][Aa][Uu][Dd][Ee](/|$)")
    (regex #"/\\.[Gg][Oo][Oo][Ss][Ee](/|$)")
    (regex #"/\\.[Cc][Oo][Dd][Ee][Xx](/|$)")
    (regex #"/\\.[Mm][Cc][Pp]\\.[Jj][Ss][Oo][Nn](/|$)")
    (regex #"/\\.[Vv][Ss][Cc][Oo][Dd][Ee](/|$)")
    (regex #"/\\.[Gg][Ii][Tt][Hh][Uu][Bb](/|$)")
    (regex #"/\\.[Aa][Gg][Ee][Nn][Tt][Tt][Ee][Aa][Mm][Ss](/|$)")
    (regex #"/\\.[Aa][Gg][Ee][Nn][Tt][Tt][Ee][Aa][Mm][Ss]-[Qq][Uu][Ee][Uu][Ee](/|$)")
    (regex #"/\\.[Aa][Gg][Ee][Nn][Tt][Tt][Ee][Aa][Mm][Ss]-[Ss][Tt][Aa][Tt][Uu][Ss](/|$)")
)
(deny file-read*
    (subpath (param "HIDDEN_0"))
)
(deny process-exec*)
(allow process-exec*
    (subpath (param "EXEC_0"))
    (subpath (param "EXEC_1"))
)
(deny network*)
`;

Deno.test("seatbelt golden: the profile text", () => {
  assert.deepEqual(seatbeltProfile(PLAN), PROFILE);
});

Deno.test("seatbelt golden: the argv", () => {
  assert.deepEqual(seatbeltArgv(PLAN), [
    "/usr/bin/sandbox-exec",
    "-D",
    "PROJECT=/Users/op/p",
    "-D",
    "TMPDIR=/private/var/folders/xy/T/agentteams-run-1",
    "-D",
    "WRITE_ROOT_0=/Users/op/p/build",
    "-D",
    "READ_ONLY_0=/Users/op/p/build/vendor/.git",
    "-D",
    "READ_ONLY_1=/Users/op/p/build/locked",
    "-D",
    "HIDDEN_0=/Users/op/.config/agentteams/keys",
    "-D",
    "EXEC_0=/usr/bin",
    "-D",
    "EXEC_1=/Users/op/.elan",
    "-p",
    PROFILE,
    "/Users/op/.elan/bin/lake",
    "build",
  ]);
});

Deno.test("seatbelt golden: no exec entries means no allow clause (never allow-all)", () => {
  const minimal: ConfinementPlan = {
    project: "/p",
    tmpdir: "/t",
    writeRoots: [],
    readOnly: [],
    masks: [],
    hidden: [],
    exec: [],
    network: true,
    cwd: "/p",
    env: [],
    argv: ["/usr/bin/true"],
  };
  const text = seatbeltProfile(minimal);
  assert.ok(text.includes("(deny process-exec*)\n"), "exec denied");
  assert.ok(!text.includes("(allow process-exec*"), "no bare allow");
  assert.ok(!text.includes("file-read*"), "no read deny without hidden dirs");
  assert.ok(!text.includes("network"), "network shared");
  assert.ok(text.endsWith("(deny process-exec*)\n"), text);
});

Deno.test("seatbelt: a relative program or sandbox-exec is refused", () => {
  assertRefusal(() => seatbeltArgv({ ...PLAN, argv: ["lake"] }), "CONFINED_INVALID", SandboxError);
  assertRefusal(() => seatbeltArgv({ ...PLAN, argv: [] }), "CONFINED_INVALID", SandboxError);
  assertRefusal(
    () => seatbeltArgv({ ...PLAN, sandboxExec: "sandbox-exec" }),
    "SANDBOX_UNAVAILABLE",
    SandboxError,
  );
});

Deno.test("seatbelt property: paths never reach the profile text, only -D values", () => {
  const seg = fc.stringMatching(/^[A-Za-z0-9 ._()#;@-]{1,12}$/);
  const path = fc.array(seg, { minLength: 1, maxLength: 4 }).map((s) => "/zz" + s.join("/"));
  fc.assert(
    fc.property(
      fc.record({
        project: path,
        tmpdir: path,
        writeRoots: fc.array(path, { maxLength: 3 }),
        readOnly: fc.array(path, { maxLength: 3 }),
        masks: fc.array(path, { maxLength: 2 }),
        hidden: fc.array(path, { maxLength: 2 }),
        exec: fc.array(path, { maxLength: 3 }),
        network: fc.boolean(),
      }),
      (r) => {
        const plan: SeatbeltPlan = {
          ...r,
          sandboxExec: "/usr/bin/sandbox-exec",
          cwd: r.project,
          env: [],
          argv: ["/usr/bin/true"],
        };
        const text = seatbeltProfile(plan);
        if (text.includes("/zz")) return false;
        const argv = seatbeltArgv(plan);
        const all = [
          r.project,
          r.tmpdir,
          ...r.writeRoots,
          ...r.readOnly,
          ...r.masks,
          ...r.hidden,
          ...r.exec,
        ];
        const values = argv.filter((_, i) => argv[i - 1] === "-D").map((d) =>
          d.slice(d.indexOf("=") + 1)
        );
        return all.every((p) => values.includes(p)) && values.length === all.length;
      },
    ),
  );
});
