/**
 * Claude Code's project skills and commands (`.claude/skills/<name>/SKILL.md`,
 * `.claude/commands/**.md`): their front matter may hold `hooks`, which Claude Code registers
 * when the skill runs and then runs as shell commands, as the user and outside its sandbox,
 * around the session's tool calls (2.1.42 `cli.js` `MS7` parses a skill's `hooks`; 2.1.332
 * "Invalid hooks in skill"). The main session's model invokes a skill on its own when its
 * description fits, so such a file is a hook one prompt away: reported (`CLAUDE_SKILL_HOOKS`)
 * wherever a `hooks` key may sit, as Claude Code cuts the front matter (its pattern, ending at the
 * first `---`) or as a YAML reader does (at the first `---` line), whichever reaches further.
 * Pure.
 *
 * @module
 */
import { claudeFrontMatter } from "./hosts/claude.ts";
import { type Spot, spot } from "./finding.ts";

/** A `hooks` key: at a line's start (any indentation, quoted or not) or in a flow mapping. */
const HOOKS_KEY = /(^|\n)([ \t]*)["']?hooks["']?[ \t]*:|([{,][ \t]*)["']?hooks["']?[ \t]*:/;

/** The longest front matter a reader may take: Claude Code's cut, or up to a `---` line. */
function widestFrontMatter(text: string): string | null {
  const t = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, "\n");
  const claude = claudeFrontMatter(t, false);
  const open = /^---[ \t]*\n/.exec(t);
  let yaml: string | null = null;
  if (open !== null) {
    const body = t.slice(open[0].length);
    const close = /(^|\n)---[ \t]*(\n|$)/.exec(body);
    yaml = close === null ? null : body.slice(0, close.index);
  }
  if (claude === null) return yaml;
  return yaml !== null && yaml.length > claude.length ? yaml : claude;
}

/**
 * The findings of a project skill or command file: a `hooks` key in its front matter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkClaudeSkill } from "./check_skill.ts";
 * const hooked = "---\nname: s\nhooks:\n  PreToolUse: []\n---\nDo it.\n";
 * assert.equal(checkClaudeSkill(hooked, ".claude/skills/s/SKILL.md")[0].code, "CLAUDE_SKILL_HOOKS");
 * assert.deepEqual(checkClaudeSkill("---\nname: s\n---\nDo it.\n", ".claude/skills/s/SKILL.md"), []);
 * ```
 */
export function checkClaudeSkill(text: string, rel: string): Spot[] {
  const fm = widestFrontMatter(text);
  if (fm === null) return [];
  const m = HOOKS_KEY.exec(fm);
  if (m === null) return [];
  const at = m.index + (m[1] ?? "").length;
  const line = 2 + (fm.slice(0, at).match(/\n/g)?.length ?? 0);
  return [
    spot(
      "CLAUDE_SKILL_HOOKS",
      line,
      1,
      `${rel} declares hooks: once the session runs it (its model may, on its own), Claude Code ` +
        "runs them as shell commands around every tool call, as the user and outside its " +
        "sandbox, whatever the agents' tools: say, so no agent is proven read-only; remove them",
    ),
  ];
}
