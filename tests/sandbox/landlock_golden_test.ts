/**
 * Golden tests for the exec allowlist (Landlock) and the bwrap versions: the kernel's probe
 * answer, the ruleset's bytes, the inner guard's argv, the whole confined argv for bwrap 0.6/0.7
 * (no `--disable-userns`, no `--bind-fd`), upstream 0.8/0.9 (no `--bind-fd`) and 0.10+ (or
 * Debian 12's 0.8, which has both), and the decision under `require_exec_allowlist` on a kernel
 * without Landlock (simulated by the probe's answer).
 */

import assert from "node:assert/strict";
import { SandboxError } from "../../lib/errors.ts";
import {
  BWRAP_FULL,
  bwrapArgv,
  type BwrapFeatures,
  parseBwrapHelp,
} from "../../lib/sandbox/bwrap.ts";
import { bwrapProbeArgv } from "../../lib/sandbox/host_probe.ts";
import {
  decideConfinement,
  execAllowlistGap,
  landlockGap,
} from "../../lib/sandbox/backend_choice.ts";
import { guardedArgv } from "../../lib/sandbox/exec_guard.ts";
import {
  execAllowlist,
  INNER_GUARD_SCRIPT,
  innerGuardArgv,
  landlockFacts,
  loaderCandidates,
  parseLandlockProbe,
  rulesetAttrHex,
} from "../../lib/sandbox/landlock.ts";
import { confineArgv, type SandboxPrograms } from "../../lib/sandbox/wrapper_chain.ts";
import { buildPlan, type ConfinementPlan } from "../../lib/sandbox/mounts.ts";
import type { ProbeResult, SandboxHost } from "../../lib/sandbox/host_probe.ts";
import { commandFilter } from "../../lib/sandbox/seccomp.ts";
import { lazyBackend } from "../../lib/sandbox/backend_choice_io.ts";
import { execAllowlistCheck } from "../../lib/cli/doctor_cmd.ts";
import { assertRefusal } from "../_helpers/assert.ts";

const PROGRAMS: SandboxPrograms = {
  bwrap: "/usr/bin/bwrap",
  sandboxExec: "/usr/bin/sandbox-exec",
  perl: "/usr/bin/perl",
  arch: "x86_64",
};

const RULES = [
  { path: "/usr/bin/make", dev: 65024, ino: 11 },
  { path: "/opt/tool", dev: 65024, ino: 12 },
  { path: "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", dev: 65024, ino: 13 },
];
const PINS = [
  { path: "/tmp/agentteams-run-1", dev: 40, ino: 2 },
  { path: "/srv/p/build", dev: 65024, ino: 99 },
];

/** Features as each bwrap's `--help` lists them (the option lines that matter). */
const HELP = {
  "0.6": "    --unshare-user               Create new user namespace\n" +
    "    --seccomp FD                 Load and use seccomp rules from FD (not repeatable)\n",
  "0.7": "    --unshare-user               Create new user namespace\n" +
    "    --size BYTES                 Set size of next argument (only for --tmpfs)\n",
  "0.8":
    "    --disable-userns             Disable further use of user namespaces inside sandbox\n" +
    "    --assert-userns-disabled     Fail unless further use of user namespace inside sandbox is disabled\n",
  "0.10":
    "    --disable-userns             Disable further use of user namespaces inside sandbox\n" +
    "    --bind-fd FD DEST            Bind open directory or path fd on DEST\n" +
    "    --ro-bind-fd FD DEST         Bind open directory or path fd read-only on DEST\n",
} as const;

function plan(features: BwrapFeatures, abi: number): ConfinementPlan {
  return buildPlan({
    roots: {
      projectReal: "/srv/p",
      homeReal: "/home/op",
      tmpdir: "/tmp/agentteams-run-1",
      writeRoots: ["/srv/p/build"],
      exec: ["/usr/bin/make", "/opt/tool"],
    },
    pins: PINS,
    cwd: "/srv/p",
    argv: ["/usr/bin/make", "all"],
    env: { PATH: "/usr/bin", LANG: "C" },
    network: false,
    hidden: ["/home/op/.config/agentteams/keys"],
    guards: [],
    scanHits: [],
    foldCase: false,
    bwrapFeatures: features,
    execAllowlist: execAllowlist({ abi, reason: abi ? null : "no Landlock (simulated)" }, RULES),
  });
}

const PINS_TEXT = "/tmp/agentteams-run-1\t40\t2\n/srv/p/build\t65024\t99";
const RULES_TEXT = "/usr/bin/make\t65024\t11\n/opt/tool\t65024\t12\n" +
  "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\t65024\t13";

Deno.test("landlock probe: the kernel's answer, read (ABI, ENOSYS, EOPNOTSUPP, garbage)", () => {
  assert.deepEqual(landlockFacts(7, 0), { abi: 7, reason: null });
  assert.deepEqual(parseLandlockProbe("7"), { abi: 7, reason: null });
  assert.deepEqual(parseLandlockProbe("1\n"), { abi: 1, reason: null });
  assert.equal(parseLandlockProbe("e38").abi, 0);
  assert.match(parseLandlockProbe("e38").reason ?? "", /no Landlock.*ENOSYS/);
  assert.match(parseLandlockProbe("e95").reason ?? "", /not enabled.*lsm=/);
  assert.equal(parseLandlockProbe("").abi, 0);
  assert.equal(parseLandlockProbe("0").abi, 0);
  assert.equal(parseLandlockProbe("-3").abi, 0);
});

Deno.test("landlock golden: the ruleset handles EXECUTE only; the loaders by architecture", () => {
  assert.equal(rulesetAttrHex(), "0100000000000000");
  assert.deepEqual(loaderCandidates("x86_64"), [
    "/lib64/ld-linux-x86-64.so.2",
    "/lib/ld-musl-x86_64.so.1",
  ]);
  assert.deepEqual(loaderCandidates("aarch64"), [
    "/lib/ld-linux-aarch64.so.1",
    "/lib/ld-musl-aarch64.so.1",
  ]);
});

Deno.test("landlock golden: execAllowlist keeps each rule once, says why without Landlock, refuses a relative or tab path", () => {
  const ll = execAllowlist({ abi: 7, reason: null }, [...RULES, RULES[0]]);
  assert.deepEqual(ll, { kind: "landlock", abi: 7, rules: RULES });
  assert.deepEqual(execAllowlist({ abi: 0, reason: "no Landlock here" }, RULES), {
    kind: "top-level-only",
    reason: "no Landlock here",
  });
  for (const path of ["usr/bin/make", "/usr/bin/a\tb", "/usr/bin/a\nb"]) {
    assertRefusal(
      () => execAllowlist({ abi: 7, reason: null }, [{ path, dev: 1, ino: 2 }]),
      "CONFINED_PATH_UNSAFE",
      SandboxError,
      path,
    );
  }
});

Deno.test("landlock golden: the inner guard's argv, with and without Landlock; an unknown architecture is refused", () => {
  assert.deepEqual(
    innerGuardArgv(PROGRAMS, { abi: 7, rules: RULES, checks: PINS, dropBadLang: true }, [
      "/usr/bin/make",
      "all",
    ]),
    [
      "/usr/bin/perl",
      "-e",
      INNER_GUARD_SCRIPT,
      "444,445,446,157",
      "0100000000000000",
      PINS_TEXT,
      RULES_TEXT,
      "1",
      "/usr/bin/make",
      "all",
    ],
  );
  assert.deepEqual(
    innerGuardArgv({ perl: "/usr/bin/perl", arch: "aarch64" }, {
      abi: 0,
      rules: RULES,
      checks: PINS,
      dropBadLang: false,
    }, ["/bin/true"]).slice(3),
    ["444,445,446,167", "", PINS_TEXT, "", "", "/bin/true"],
  );
  assertRefusal(
    () =>
      innerGuardArgv({ perl: "/usr/bin/perl", arch: "riscv64" }, {
        abi: 7,
        rules: [],
        checks: [],
        dropBadLang: false,
      }, ["/bin/true"]),
    "CONFINED_INVALID",
    SandboxError,
  );
  // The script names no path: every path reaches it as an argument.
  for (const r of [...RULES, ...PINS]) assert.ok(!INNER_GUARD_SCRIPT.includes(r.path));
});

Deno.test("bwrap versions: features come from --help, not the version number", () => {
  assert.deepEqual(parseBwrapHelp(HELP["0.6"]), { disableUserns: false, bindFd: false });
  assert.deepEqual(parseBwrapHelp(HELP["0.7"]), { disableUserns: false, bindFd: false });
  assert.deepEqual(parseBwrapHelp(HELP["0.8"]), { disableUserns: true, bindFd: false });
  assert.deepEqual(parseBwrapHelp(HELP["0.10"]), BWRAP_FULL);
  // A mention inside another option's text is not the option.
  assert.deepEqual(parseBwrapHelp("    --foo   unlike --disable-userns or --bind-fd\n"), {
    disableUserns: false,
    bindFd: false,
  });
  assert.deepEqual(parseBwrapHelp(""), { disableUserns: false, bindFd: false });
});

/** The whole confined argv for a bwrap, with the two scripts and the filter checked apart. */
function shape(features: BwrapFeatures, abi: number) {
  const p = plan(features, abi);
  const cmd = confineArgv(p, "bwrap", PROGRAMS, null);
  return { p, argv: [cmd.program, ...cmd.args] };
}

Deno.test("bwrap golden: 0.10+ (and Debian 12's 0.8) with Landlock: --disable-userns, roots bound by descriptor, the inner guard in front of the command", () => {
  const { p, argv } = shape(BWRAP_FULL, 7);
  assert.deepEqual(p.execAllowlist, { kind: "landlock", abi: 7, rules: RULES });
  const inner = innerGuardArgv(PROGRAMS, {
    abi: 7,
    rules: RULES,
    checks: PINS,
    dropBadLang: true,
  }, ["/usr/bin/make", "all"]);
  const envWithBadLang = [["LANG", "C"], ["PATH", "/usr/bin"], ["PERL_BADLANG", "0"], [
    "TMPDIR",
    "/tmp/agentteams-run-1",
  ]] as const;
  assert.deepEqual(
    argv,
    guardedArgv(
      PROGRAMS,
      commandFilter("x86_64", { network: false, execAllowlist: true }),
      bwrapArgv({ ...p, bwrap: "/usr/bin/bwrap", argv: inner, env: envWithBadLang }),
      PINS,
    ),
  );
  const i = argv.indexOf("--unshare-all");
  assert.deepEqual(argv.slice(i, i + 7), [
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
  ]);
  // The outer guard is told the pins (it rewrites their binds to --bind-fd).
  assert.equal(argv[5], PINS_TEXT);
  assert.deepEqual(argv.slice(-inner.length - 1), ["--", ...inner]);
});

Deno.test("bwrap golden: 0.6 and 0.7 (no --disable-userns, no --bind-fd): the filter blocks new user namespaces, roots bound by path and checked inside", () => {
  for (const v of ["0.6", "0.7"] as const) {
    const features = parseBwrapHelp(HELP[v]);
    const { p, argv } = shape(features, 7);
    const full = shape(BWRAP_FULL, 7).argv;
    assert.ok(!argv.includes("--disable-userns"), v);
    // The filter is the one with blockUserns; nothing else differs but the flag and the pins.
    assert.equal(
      argv[4],
      commandFilter("x86_64", { network: false, blockUserns: true, execAllowlist: true }).toHex(),
    );
    assert.notEqual(argv[4], full[4]);
    assert.equal(argv[5], "", `${v}: no pins for the outer guard (it would ask for --bind-fd)`);
    const expected = [...full];
    expected[4] = argv[4];
    expected[5] = "";
    expected.splice(expected.indexOf("--disable-userns"), 1);
    assert.deepEqual(argv, expected, v);
    // The inner guard still gets every writable place to check.
    assert.ok(argv.includes(PINS_TEXT), v);
    assert.deepEqual(p.bwrapFeatures, { disableUserns: false, bindFd: false });
    assert.ok(!bwrapProbeArgv("/usr/bin/bwrap", features).includes("--disable-userns"));
  }
});

Deno.test("bwrap golden: upstream 0.8/0.9 (--disable-userns, no --bind-fd), and no Landlock: the inner guard only checks the roots", () => {
  const features = parseBwrapHelp(HELP["0.8"]);
  const { p, argv } = shape(features, 0);
  assert.deepEqual(p.execAllowlist, { kind: "top-level-only", reason: "no Landlock (simulated)" });
  assert.ok(argv.includes("--disable-userns"));
  assert.equal(argv[4], commandFilter("x86_64", { network: false }).toHex());
  assert.equal(argv[5], "");
  const inner = argv.slice(argv.lastIndexOf("-e") - 1);
  assert.deepEqual(inner.slice(3), [
    "444,445,446,157",
    "",
    PINS_TEXT,
    "",
    "1",
    "/usr/bin/make",
    "all",
  ]);
  // With --bind-fd and no Landlock the command runs as before, with no inner guard at all.
  const bare = shape(BWRAP_FULL, 0).argv;
  assert.deepEqual(bare.slice(-3), ["--", "/usr/bin/make", "all"]);
  assert.ok(!bare.includes(INNER_GUARD_SCRIPT));
  assert.ok(!bare.includes("PERL_BADLANG"), "the command's environment is as before");
});

const HOST_NO_LL: SandboxHost = {
  bwrap: BWRAP_FULL,
  landlock: { abi: 0, reason: "this kernel has no Landlock (simulated)" },
};
const HOST_LL: SandboxHost = { bwrap: BWRAP_FULL, landlock: { abi: 7, reason: null } };

Deno.test("require_exec_allowlist: a kernel without Landlock (the probe's answer) is refused, runner or direct, opt-out or not; with Landlock, or without the field, it runs", () => {
  const noLl: ProbeResult = {
    ok: true,
    backend: "bwrap",
    program: "/usr/bin/bwrap",
    host: HOST_NO_LL,
  };
  const withLl: ProbeResult = {
    ok: true,
    backend: "bwrap",
    program: "/usr/bin/bwrap",
    host: HOST_LL,
  };
  const failed: ProbeResult = {
    ok: false,
    backend: "bwrap",
    program: "/usr/bin/bwrap",
    reason: "x",
  };
  for (const allowUnconfined of [false, true]) {
    for (const direct of [false, true]) {
      const e = assertRefusal(
        () =>
          decideConfinement({ probe: noLl, allowUnconfined, direct, requireExecAllowlist: true }),
        "SANDBOX_UNAVAILABLE",
        SandboxError,
      );
      assert.match(e.message, /require_exec_allowlist.*no Landlock \(simulated\).*Landlock/);
      assertRefusal(
        () =>
          decideConfinement({ probe: failed, allowUnconfined, direct, requireExecAllowlist: true }),
        "SANDBOX_UNAVAILABLE",
        SandboxError,
        "no sandbox and the opt-out: still refused",
      );
      assert.equal(
        decideConfinement({ probe: withLl, allowUnconfined, direct, requireExecAllowlist: true }),
        "bwrap",
      );
      assert.equal(decideConfinement({ probe: noLl, allowUnconfined, direct }), "bwrap");
    }
  }
  assert.equal(execAllowlistGap({ ok: true, backend: "seatbelt", program: "/s" }), null);
  assert.equal(landlockGap(HOST_LL), null);
  assert.match(landlockGap(null) ?? "", /not asked/);
  // The unconfined opt-out cannot be asked for under the field.
  assertRefusal(
    () =>
      lazyBackend({ allowUnconfinedRuns: true, requireExecAllowlist: true }, { unconfined: true }),
    "UNCONFINED_NOT_ALLOWED",
    SandboxError,
  );
});

Deno.test("doctor's exec-allowlist line: ok with the ABI; without Landlock a warning, or an error (SANDBOX_UNAVAILABLE) under require_exec_allowlist", () => {
  const ok = execAllowlistCheck(HOST_LL, false);
  assert.equal(ok.ok, true);
  assert.match(ok.message, /Landlock ABI 7/);
  const warn = execAllowlistCheck(HOST_NO_LL, false);
  assert.deepEqual([warn.ok, warn.level, warn.code], [false, "warning", undefined]);
  assert.match(warn.message, /no Landlock \(simulated\).*set require_exec_allowlist/);
  const err = execAllowlistCheck(HOST_NO_LL, true);
  assert.deepEqual([err.ok, err.level, err.code], [false, "error", "SANDBOX_UNAVAILABLE"]);
  assert.match(err.message, /every confined run is refused/);
});
