/**
 * Live Seatbelt tests. They run only where `/usr/bin/sandbox-exec` exists (macOS); elsewhere each
 * is registered ignored, so `deno test` counts them as ignored, not passed. docs/sandbox.md lists
 * what only these tests verify.
 */

import {
  confineArgv,
  makePrivateTmpdir,
  prepareConfinement,
  probeSandbox,
  removePrivateTmpdir,
} from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";

/** Whether `/usr/bin/sandbox-exec`, the program these tests drive, is on this machine. */
function hasSandboxExec(): boolean {
  try {
    Deno.statSync("/usr/bin/sandbox-exec");
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** Every test here: ignored (reported as such) where sandbox-exec is absent. */
const LIVE = { ignore: !hasSandboxExec() };

const run = async (
  project: string,
  home: string,
  script: string,
  opts: { exec?: string[]; network?: boolean } = {},
) => {
  const tmpdir = makePrivateTmpdir();
  try {
    const plan = prepareConfinement({
      project,
      home,
      tmpdir,
      agent: { exec: opts.exec ?? ["/bin", "/usr/bin"], write: ["build"] },
      cwd: ".",
      argv: ["/bin/sh", "-c", script],
      env: { PATH: "/usr/bin:/bin", HOME: home },
      network: opts.network ?? false,
      protectedPaths: [],
      hiddenDirs: [`${home}/.config/agentteams/keys`],
      controlPlane: { git: [] },
    });
    const cmd = confineArgv(plan, "seatbelt");
    const out = await new Deno.Command(cmd.program, {
      args: cmd.args,
      env: cmd.env,
      clearEnv: true,
      cwd: cmd.cwd,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  } finally {
    removePrivateTmpdir(tmpdir);
  }
};

const fixture = () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at seatbelt " }));
  const project = `${base}/proj`;
  const home = `${base}/home`;
  Deno.mkdirSync(`${project}/.git/hooks`, { recursive: true });
  Deno.writeTextFileSync(`${project}/.git/config`, "[core]\n");
  Deno.mkdirSync(`${project}/build/sub`, { recursive: true });
  Deno.mkdirSync(`${home}/.config/agentteams/keys`, { recursive: true, mode: 0o700 });
  Deno.writeTextFileSync(`${home}/.config/agentteams/keys/proposal-ledger.key`, "SECRET-KEY\n");
  return { base, project, home };
};

const exists = (p: string) => {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

Deno.test("seatbelt live: the probe succeeds", LIVE, async () => {
  const probe = await probeSandbox();
  assert.ok(probe.ok && probe.backend === "seatbelt", JSON.stringify(probe));
});

Deno.test("seatbelt live: writes only to the write root and TMPDIR", LIVE, async () => {
  const fx = fixture();
  try {
    const r = await run(
      fx.project,
      fx.home,
      `echo ok > build/ok; echo ok > "$TMPDIR/t" && echo tmp-ok; echo pwn > README; ` +
        `echo pwn >> .git/config; echo pwn > ${fx.home}/.zshrc; echo done`,
    );
    assert.ok(r.stdout.includes("done") && r.stdout.includes("tmp-ok"), r.stderr);
    assert.ok(Deno.readTextFileSync(`${fx.project}/build/ok`) === "ok\n", "write root writable");
    assert.ok(!exists(`${fx.project}/README`), "project root not writable");
    assert.ok(Deno.readTextFileSync(`${fx.project}/.git/config`) === "[core]\n", ".git kept");
    assert.ok(!exists(`${fx.home}/.zshrc`), "home not writable");
  } finally {
    Deno.removeSync(fx.base, { recursive: true });
  }
});

Deno.test(
  "seatbelt live: .git in any letter case is denied inside a write root",
  LIVE,
  async () => {
    const fx = fixture();
    try {
      const r = await run(
        fx.project,
        fx.home,
        "mkdir build/sub/.git; mkdir build/sub/.GiT; mkdir -p build/.claude/x; echo done",
      );
      assert.ok(r.stdout.includes("done"), r.stderr);
      for (const p of ["build/sub/.git", "build/sub/.GiT", "build/.claude"]) {
        assert.ok(!exists(`${fx.project}/${p}`), `${p} must not be created`);
      }
    } finally {
      Deno.removeSync(fx.base, { recursive: true });
    }
  },
);

Deno.test("seatbelt live: the key directory is unreadable", LIVE, async () => {
  const fx = fixture();
  try {
    const r = await run(
      fx.project,
      fx.home,
      `cat ${fx.home}/.config/agentteams/keys/proposal-ledger.key; echo done`,
    );
    assert.ok(r.stdout.includes("done") && !r.stdout.includes("SECRET-KEY"), r.stdout);
  } finally {
    Deno.removeSync(fx.base, { recursive: true });
  }
});

Deno.test("seatbelt live: programs outside exec are denied", LIVE, async () => {
  const fx = fixture();
  try {
    const r = await run(
      fx.project,
      fx.home,
      "/usr/bin/true && echo usr-ok; /sbin/ping -c1 127.0.0.1 >/dev/null 2>&1; echo ping=$?",
      { exec: ["/bin", "/usr/bin"] },
    );
    assert.ok(r.stdout.includes("usr-ok"), r.stderr);
    assert.ok(!r.stdout.includes("ping=0"), r.stdout);
  } finally {
    Deno.removeSync(fx.base, { recursive: true });
  }
});

Deno.test("seatbelt live: the network is denied unless shared", LIVE, async () => {
  const fx = fixture();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  try {
    const script = `/usr/bin/nc -z -w 2 127.0.0.1 ${port} && echo connected || echo refused`;
    const denied = await run(fx.project, fx.home, script);
    assert.ok(denied.stdout.includes("refused"), denied.stdout + denied.stderr);
    const shared = await run(fx.project, fx.home, script, { network: true });
    assert.ok(shared.stdout.includes("connected"), shared.stdout + shared.stderr);
  } finally {
    listener.close();
    Deno.removeSync(fx.base, { recursive: true });
  }
});
