/**
 * Runs `action.yml`'s composite steps as written, the way a GitHub runner does: each step's
 * `run` script with `bash --noprofile --norc -eo pipefail`, its `env:` over the job's
 * environment, `${{ inputs.* }}` and `${{ steps.<id>.outputs.* }}` substituted, its `if:`
 * judged, `GITHUB_OUTPUT`, `GITHUB_PATH`, `GITHUB_ACTION_PATH` and `RUNNER_TEMP` set; a failing
 * step fails the job and skips the steps after it.
 */
import { join } from "node:path";
import { parse } from "yaml";
import { baseChildEnv, DENO, REPO_ROOT } from "../_helpers/mod.ts";

interface ActionStep {
  name: string;
  id?: string;
  if?: string;
  shell: string;
  env?: Record<string, string>;
  run: string;
}

interface ActionFile {
  inputs: Record<string, { default?: string }>;
  runs: { using: string; steps: ActionStep[] };
}

/** action.yml, parsed. */
export function actionFile(): ActionFile {
  return parse(Deno.readTextFileSync(join(REPO_ROOT, "action.yml"))) as ActionFile;
}

/** One step as it ran. */
export interface StepRun {
  readonly name: string;
  /** Null: skipped (its `if:` was false, or an earlier step failed). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The job as it ran. */
export interface JobRun {
  readonly steps: StepRun[];
  /** Every step that ran passed. */
  readonly ok: boolean;
  /** The action's outputs. */
  readonly outputs: Record<string, string>;
}

/** Evaluates the expressions action.yml uses: a context value, or `a == 'x'` / `a != 'x'`. */
function evaluate(expr: string, ctx: (name: string) => string): string {
  const e = expr.trim();
  const cmp = /^([a-z0-9_.-]+)\s*(==|!=)\s*'([^']*)'$/.exec(e);
  if (cmp !== null) {
    const eq = ctx(cmp[1]) === cmp[3];
    return String(cmp[2] === "==" ? eq : !eq);
  }
  if (/^[a-z0-9_.-]+$/.test(e)) return ctx(e);
  throw new Error(`action.yml uses an expression the test runner doesn't know: ${expr}`);
}

function substitute(text: string, ctx: (name: string) => string): string {
  return text.replace(/\$\{\{([^}]*)\}\}/g, (_m, e: string) => evaluate(e, ctx));
}

function readOutputs(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  let text = "";
  try {
    text = Deno.readTextFileSync(path);
  } catch { /* none written */ }
  for (const line of text.split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

/**
 * Runs the action's steps in `workspace` with `inputs` (others at their defaults) and `jobEnv`
 * (the `env:` of the workflow step that uses the action) over a minimal runner environment.
 */
export async function runAction(opts: {
  workspace: string;
  temp: string;
  inputs: Record<string, string>;
  jobEnv: Record<string, string>;
}): Promise<JobRun> {
  const action = actionFile();
  if (action.runs.using !== "composite") throw new Error("action.yml is not a composite action");
  const inputs: Record<string, string> = {};
  for (const [k, v] of Object.entries(action.inputs)) inputs[k] = v.default ?? "";
  for (const [k, v] of Object.entries(opts.inputs)) {
    if (!(k in action.inputs)) throw new Error(`action.yml has no input ${k}`);
    inputs[k] = v;
  }
  const stepOutputs: Record<string, Record<string, string>> = {};
  const ctx = (name: string): string => {
    const parts = name.split(".");
    if (parts[0] === "inputs" && parts.length === 2) return inputs[parts[1]] ?? "";
    if (parts[0] === "steps" && parts[2] === "outputs" && parts.length === 4) {
      return stepOutputs[parts[1]]?.[parts[3]] ?? "";
    }
    throw new Error(`action.yml uses a context the test runner doesn't know: ${name}`);
  };
  const steps: StepRun[] = [];
  let failed = false;
  for (const [i, step] of action.runs.steps.entries()) {
    const runs = !failed && (step.if === undefined || substitute(step.if, ctx) === "true");
    if (!runs) {
      steps.push({ name: step.name, code: null, stdout: "", stderr: "" });
      continue;
    }
    if (step.shell !== "bash") throw new Error(`step ${step.name}: shell ${step.shell}`);
    const script = join(opts.temp, `step-${i}.sh`);
    Deno.writeTextFileSync(script, substitute(step.run, ctx));
    const output = join(opts.temp, `step-${i}.output`);
    Deno.writeTextFileSync(output, "");
    const env: Record<string, string> = {
      // The runner's deno cache is the test's own (nothing downloaded per job).
      ...baseChildEnv(),
      PATH: `${join(DENO, "..")}:/usr/local/bin:/usr/bin:/bin`,
      GITHUB_ACTION_PATH: REPO_ROOT,
      GITHUB_OUTPUT: output,
      GITHUB_PATH: join(opts.temp, "github-path"),
      RUNNER_TEMP: opts.temp,
      ...opts.jobEnv,
    };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = substitute(String(v), ctx);
    const r = await new Deno.Command("bash", {
      args: ["--noprofile", "--norc", "-eo", "pipefail", script],
      cwd: opts.workspace,
      clearEnv: true,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    steps.push({
      name: step.name,
      code: r.code,
      stdout: dec.decode(r.stdout),
      stderr: dec.decode(r.stderr),
    });
    if (step.id !== undefined) stepOutputs[step.id] = readOutputs(output);
    if (r.code !== 0) failed = true;
  }
  return {
    steps,
    ok: !failed,
    outputs: {
      "sarif-file": stepOutputs.audit?.["sarif-file"] ?? "",
      "audit-exit": stepOutputs.audit?.exit ?? "",
    },
  };
}

/** A job's steps as text, for assertion messages. */
export function jobLog(job: JobRun): string {
  return job.steps.map((s) => `## ${s.name} (${s.code})\n${s.stdout}${s.stderr}`).join("\n");
}
