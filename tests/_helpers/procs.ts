/**
 * Processes seen through /proc, for tests that must show a process ended: not by sleeping and
 * looking for what it would have done, but by the event itself (its /proc entry gone, or a
 * zombie, whose memory and files are already released).
 *
 * A test marks the processes it means with a word no other process carries (a unique path or
 * token in their command line); {@link livingWith} finds them, {@link awaitEnd} waits for them to
 * end, with a hang guard that fails the test.
 */

/** The state letter of `/proc/PID/stat` (`R`, `S`, `Z`, ...), or `null` when the entry is gone. */
export function stateOf(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) || null;
  } catch {
    return null;
  }
}

/** Whether `pid` has ended: its entry is gone or it is a zombie. */
export function ended(pid: number): boolean {
  const s = stateOf(pid);
  return s === null || s === "Z" || s === "X";
}

/**
 * The pids of living processes (not zombies) whose command line contains `word`, the caller's
 * own process excluded. Reads every /proc entry (the test runs as a user who may read them, or
 * as root).
 */
export function livingWith(word: string): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(e.name)) continue;
    const pid = Number(e.name);
    if (pid === Deno.pid) continue;
    let cmdline: string;
    try {
      cmdline = Deno.readTextFileSync(`/proc/${pid}/cmdline`);
    } catch {
      continue;
    }
    if (cmdline.includes(word) && !ended(pid)) out.push(pid);
  }
  return out.sort((a, b) => a - b);
}

/**
 * Waits until no living process's command line contains `word` (polling /proc); throws when
 * some still live after `guardMs` (a hang guard, not a timing claim: it only fails a test).
 */
export async function awaitEnd(word: string, guardMs = 60_000): Promise<void> {
  const until = performance.now() + guardMs;
  for (;;) {
    const left = livingWith(word);
    if (left.length === 0) return;
    if (performance.now() > until) {
      throw new Error(`processes mentioning ${word} still live after ${guardMs} ms: ${left}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
