/**
 * A corpus of realistic Claude Code agent files for the audit's bench (issue 24 item 5): the
 * shapes of tests/fixtures/audit/claude and tests/testdata/hosts/claude in the proportions public
 * collections of subagents show. Most files are a plain `name/description/tools/model` front
 * matter over a long Markdown body; some have the `/agents` generator's one-line description
 * holding `: ` and `\n` escapes (read only on Claude Code's retry), a quoted description, no
 * `tools:` line, a block or flow list of tools, `color:`, a comment. Deterministic (a seeded
 * generator), so runs compare.
 *
 * Usage: deno run --allow-write scripts/bench/audit_corpus.ts DIR [N]
 *
 * @module
 */

/** The shapes, with their weights (out of 100) and the front matter each writes. */
const SHAPES: readonly {
  readonly weight: number;
  readonly front: (i: number, r: Rng) => string;
}[] = [
  // Plain: the common case.
  {
    weight: 52,
    front: (i, r) =>
      `name: ${slug(i)}\ndescription: ${sentence(r, 18)}. Use PROACTIVELY for ${
        pick(r, TOPICS)
      } tasks.\ntools: ${tools(r)}\nmodel: ${pick(r, MODELS)}\n`,
  },
  // The /agents generator: one long plain line with `: ` and literal `\n` escapes.
  {
    weight: 14,
    front: (i, r) =>
      `name: ${slug(i)}\ndescription: Use this agent when the user needs ${
        pick(r, TOPICS)
      } work. Examples:\\n\\n<example>\\nContext: ${sentence(r, 8)}\\nuser: "${
        sentence(r, 6)
      }"\\nassistant: "I'll use the ${slug(i)} agent."\\n</example>\ntools: ${tools(r)}\nmodel: ${
        pick(r, MODELS)
      }\ncolor: ${pick(r, COLORS)}\n`,
  },
  // A double-quoted description with escapes.
  {
    weight: 10,
    front: (i, r) =>
      `name: ${slug(i)}\ndescription: "${sentence(r, 14)}.\\n\\nExamples: ${
        sentence(r, 6)
      }"\ntools: ${tools(r)}\nmodel: ${pick(r, MODELS)}\n`,
  },
  // No tools line: every tool.
  {
    weight: 10,
    front: (i, r) =>
      `name: ${slug(i)}\ndescription: ${sentence(r, 20)}\nmodel: ${pick(r, MODELS)}\n`,
  },
  // A block list of tools.
  {
    weight: 6,
    front: (i, r) =>
      `name: ${slug(i)}\ndescription: ${sentence(r, 16)}\ntools:\n${
        toolList(r).map((t) => `  - ${t}\n`).join("")
      }model: ${pick(r, MODELS)}\n`,
  },
  // A flow list of tools.
  {
    weight: 4,
    front: (i, r) =>
      `name: ${slug(i)}\ndescription: ${sentence(r, 16)}\ntools: [${toolList(r).join(", ")}]\n`,
  },
  // A comment and extra keys.
  {
    weight: 4,
    front: (i, r) =>
      `# generated\nname: ${slug(i)}\ndescription: '${sentence(r, 12)}'\ntools: ${
        tools(r)
      }\nmodel: ${pick(r, MODELS)}\ncolor: ${pick(r, COLORS)}\n`,
  },
];

const TOPICS = ["review", "testing", "security", "docs", "refactoring", "database", "frontend"];
const MODELS = ["sonnet", "opus", "haiku", "inherit"];
const COLORS = ["blue", "green", "red", "purple", "yellow"];
const READ = ["Read", "Grep", "Glob", "WebFetch", "WebSearch"];
const WRITE = ["Write", "Edit", "MultiEdit", "Bash", "TodoWrite"];
const WORDS = (
  "the agent reads code and reports findings with care for each module it checks against the " +
  "project conventions before proposing small focused changes that keep tests green and docs " +
  "current while it explains trade offs clearly"
).split(" ");

type Rng = () => number;

/** A small seeded generator (mulberry32). */
function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(r: Rng, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

function slug(i: number): string {
  return `agent-${i.toString(36)}`;
}

function sentence(r: Rng, n: number): string {
  const w: string[] = [];
  for (let k = 0; k < n; k++) w.push(pick(r, WORDS));
  const s = w.join(" ");
  return s[0].toUpperCase() + s.slice(1);
}

function toolList(r: Rng): string[] {
  const out = new Set<string>();
  const n = 2 + Math.floor(r() * 4);
  // About a third of real agents grant a write tool or a shell.
  const pool = r() < 0.35 ? [...READ, ...WRITE] : READ;
  for (let k = 0; k < n; k++) out.add(pick(r, pool));
  return [...out];
}

function tools(r: Rng): string {
  return toolList(r).join(", ");
}

/** A long Markdown body (about 2-8 KB, as real subagent prompts are). */
function body(r: Rng, i: number): string {
  const parts = [`\nYou are ${slug(i)}, a focused subagent.\n`];
  const sections = 3 + Math.floor(r() * 6);
  for (let s = 0; s < sections; s++) {
    parts.push(`\n## ${sentence(r, 3)}\n\n${sentence(r, 40)}.\n`);
    for (let k = 0; k < 4; k++) parts.push(`- ${sentence(r, 10)}\n`);
    if (r() < 0.3) parts.push("\n```bash\nnpm test -- --watch=false\n```\n");
  }
  parts.push("\n## Write Policy: Return Proposals, Never Write\n\nReturn proposals.\n");
  return parts.join("");
}

/**
 * Writes `n` agent files under `dir/.claude/agents/` (100 to a folder) and returns the front
 * matters, in the order written.
 *
 * @example
 * ```ts
 * import { writeAuditCorpus } from "./audit_corpus.ts";
 * const fronts = writeAuditCorpus("/tmp/corpus", 100);
 * fronts.length; // 100
 * ```
 */
export function writeAuditCorpus(dir: string, n: number, seed = 24): string[] {
  const r = rng(seed);
  const total = SHAPES.reduce((a, s) => a + s.weight, 0);
  const fronts: string[] = [];
  for (let i = 0; i < n; i++) {
    let x = r() * total;
    let shape = SHAPES[0];
    for (const s of SHAPES) {
      if (x < s.weight) {
        shape = s;
        break;
      }
      x -= s.weight;
    }
    const fm = shape.front(i, r);
    fronts.push(fm);
    const sub = `${dir}/.claude/agents/g${Math.floor(i / 100)}`;
    if (i % 100 === 0) Deno.mkdirSync(sub, { recursive: true });
    Deno.writeTextFileSync(`${sub}/${slug(i)}.md`, `---\n${fm}---\n${body(r, i)}`);
  }
  return fronts;
}

if (import.meta.main) {
  const [dir, n] = Deno.args;
  if (dir === undefined) throw new Error("usage: audit_corpus.ts DIR [N]");
  writeAuditCorpus(dir, n === undefined ? 10_000 : Number(n));
}
