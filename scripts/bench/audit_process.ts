/**
 * The audit at the speed of its parser (issue 24 item 5), a section of `deno task bench`: a
 * corpus of realistic Claude agent files (scripts/bench/audit_corpus.ts; 10,000, or 2,000 with
 * `--quick`), audited by the whole process from an installed launcher (the release bundle under
 * the release flags, as scripts/install writes it), text and `--format json`, against a floor
 * measured in the same rounds: a bare Deno process that reads each file and parses its front
 * matter with the same `yaml` package (scripts/bench/audit_floor.ts). Wall time, CPU time (user +
 * system) and peak RSS, each a median; then the same in process: `auditTeam` against reading and
 * parsing the same files. Targets: at most 1.3x the floor, at most 150 MiB peak.
 *
 * @module
 */
import { bundleTo } from "../bundle.ts";
import { launchV8Flags, releaseFlags } from "../../lib/permissions.ts";
import { auditTeam } from "../../lib/audit/audit.ts";
import { writeAuditCorpus } from "./audit_corpus.ts";
import { parse } from "yaml";

/** What the section needs from the bench. */
export interface AuditProcessContext {
  /** The repository root. */
  readonly root: string;
  /** The bench's scratch directory. */
  readonly work: string;
  /** `--quick`. */
  readonly quick: boolean;
}

interface Usage {
  readonly wall: number;
  readonly cpu: number;
  readonly rssKiB: number;
}

const TIME = "/usr/bin/time";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function ms(x: number): string {
  return x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`;
}

function row(label: string, value: string, note = ""): void {
  console.log(`  ${label.padEnd(58)} ${value.padStart(14)}  ${note}`);
}

/** One run of `argv` under GNU time: wall, user + system CPU and peak RSS. */
async function measure(argv: string[], expect: readonly number[], work: string): Promise<Usage> {
  const out = `${work}/audit-time.txt`;
  const t = performance.now();
  const r = await new Deno.Command(TIME, {
    args: ["-o", out, "-f", "%U %S %M", ...argv],
    stdout: "null",
    stderr: "piped",
  }).output();
  const wall = performance.now() - t;
  if (!expect.includes(r.code)) {
    throw new Error(`${argv.join(" ")} exited ${r.code}: ${new TextDecoder().decode(r.stderr)}`);
  }
  const [user, sys, rss] = Deno.readTextFileSync(out).trim().split(/\s+/).slice(-3).map(Number);
  return { wall, cpu: (user + sys) * 1000, rssKiB: rss };
}

function summary(us: Usage[]): Usage {
  return {
    wall: median(us.map((u) => u.wall)),
    cpu: median(us.map((u) => u.cpu)),
    rssKiB: median(us.map((u) => u.rssKiB)),
  };
}

function mib(kib: number): string {
  return `${(kib / 1024).toFixed(0)} MiB`;
}

/**
 * Runs the section and prints its rows.
 *
 * @example
 * ```ts
 * import { auditProcessSection } from "./audit_process.ts";
 * await auditProcessSection({ root: "/src/agentteams", work: "/tmp/bench", quick: true });
 * ```
 */
export async function auditProcessSection(ctx: AuditProcessContext): Promise<void> {
  console.log(
    "\n7b. Audit of realistic agent files (whole process from the installed launcher; rounds " +
      "interleave the floor and the subjects)",
  );
  try {
    Deno.statSync(TIME);
  } catch {
    throw new Error(`${TIME} (GNU time) is needed for CPU time and peak RSS: apt-get install time`);
  }
  const n = ctx.quick ? 2_000 : 10_000;
  const dir = `${ctx.work}/audit-corpus`;
  writeAuditCorpus(dir, n);
  const bundle = `${ctx.work}/audit-bundle`;
  await bundleTo(ctx.root, bundle);
  const deno = Deno.execPath();
  // The launcher scripts/install writes: the bundle under the release flags, with the audit's own
  // V8 options.
  const launcher = [
    deno,
    "run",
    "--quiet",
    "--no-config",
    ...launchV8Flags("audit"),
    ...releaseFlags(),
    `${bundle}/main.js`,
  ];
  const env = ["env", "AGENTTEAMS_BROAD_OK=1"];
  const text = [...env, ...launcher, "audit", dir];
  const json = [...env, ...launcher, "audit", "--format", "json", dir];
  const floorArgv = [
    deno,
    "run",
    "--quiet",
    `--config=${ctx.root}/deno.json`,
    "--allow-read",
    "--allow-env",
    `${ctx.root}/scripts/bench/audit_floor.ts`,
    dir,
  ];
  // No brief: the audit reports (exit 0); a failing finding would exit 1 under the switch.
  const ok = [0, 1];
  await measure(floorArgv, [0], ctx.work);
  await measure(text, ok, ctx.work);
  const rounds = ctx.quick ? 3 : 5;
  const all = { floor: [] as Usage[], text: [] as Usage[], json: [] as Usage[] };
  for (let i = 0; i < rounds; i++) {
    all.floor.push(await measure(floorArgv, [0], ctx.work));
    all.text.push(await measure(text, ok, ctx.work));
    all.json.push(await measure(json, ok, ctx.work));
  }
  const floor = summary(all.floor);
  row(
    `floor: read ${n} files, yaml-parse each front matter`,
    ms(floor.wall),
    `cpu ${ms(floor.cpu)}, peak ${mib(floor.rssKiB)}`,
  );
  for (const [label, us] of [["text", all.text], ["--format json", all.json]] as const) {
    const s = summary(us);
    row(
      `audit (${label}) of the ${n} files, whole process`,
      ms(s.wall),
      `${(s.wall / floor.wall).toFixed(2)}x wall, ${(s.cpu / floor.cpu).toFixed(2)}x cpu ` +
        `(target <= 1.3); peak ${mib(s.rssKiB)} (target <= 150 MiB)`,
    );
  }
  // The same in process: the audit of the tree against reading and parsing its files.
  const dec = new TextDecoder();
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of Deno.readDirSync(d)) {
      if (e.isDirectory) walk(`${d}/${e.name}`);
      else if (e.name.endsWith(".md")) files.push(`${d}/${e.name}`);
    }
  };
  walk(dir);
  const inFloor: number[] = [];
  const inAudit: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    for (const f of files) {
      const s = dec.decode(Deno.readFileSync(f));
      const end = s.indexOf("\n---\n", 3);
      try {
        parse(s.slice(4, end + 1));
      } catch {
        // counted as parsed
      }
    }
    inFloor.push(performance.now() - t);
    t = performance.now();
    const r = await auditTeam(dir, ["."], { switchOn: false, frameworks: [] });
    inAudit.push(performance.now() - t);
    if (r.files !== n) throw new Error(`the audit counted ${r.files} of ${n} files`);
  }
  row(`floor in process: read and yaml-parse the ${n} files`, ms(median(inFloor)));
  row(
    `auditTeam of the ${n} files, in process`,
    ms(median(inAudit)),
    `${(median(inAudit) / median(inFloor)).toFixed(2)}x the floor`,
  );
}
