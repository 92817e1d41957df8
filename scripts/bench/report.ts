/**
 * The bench's report (issue 27 item 6): every row `deno task bench` prints, recorded as it is
 * printed, then written as `dist/bench.json` and `dist/bench.svg` (each figure beside the floor
 * it was measured against in the same run). scripts/bench.ts records each row through
 * {@link recordRow} and calls {@link writeBenchReport} once at its end; the sections stay
 * bench.ts's own.
 *
 * A figure's ratio is the one its row prints (`2.10x the floor`, `ratio 1.05`); its floor is the
 * section's latest `floor` row when the ratio is the figure over it (to the printed rounding),
 * else the figure divided by the ratio (labelled with the row's note, which names that floor);
 * a target is the row's `target <= N`.
 *
 * @example
 * ```ts
 * import { benchFigures, recordRow, recordSection } from "./report.ts";
 * recordSection("0. Start-up");
 * recordRow("floor: an empty `deno run`", "40.0 ms");
 * recordRow("--version, whole process", "60.0 ms", "1.50x the floor (target <= 1.6)");
 * benchFigures()[1].floor?.ms; // 40
 * ```
 * @module
 */

/** One printed row, as the report holds it. */
export interface BenchFigure {
  /** The section it was printed in (`0. Start-up ...`). */
  readonly section: string;
  /** The row's label. */
  readonly label: string;
  /** The row's value as printed (`123 ms`, `4567 rows/s`). */
  readonly value: string;
  /** The value in milliseconds, when it is a time. */
  readonly ms: number | null;
  /** The row's note as printed. */
  readonly note: string;
  /** The ratio to its floor the row prints, if any. */
  readonly ratio: number | null;
  /** The floor: its label (the section's latest floor row) and milliseconds (`ms / ratio`). */
  readonly floor: { readonly label: string; readonly ms: number | null } | null;
  /** The target ratio the row names (`target <= N`), if any. */
  readonly target: number | null;
  /** Whether the row is itself a floor. */
  readonly isFloor: boolean;
}

const rows: { section: string; label: string; value: string; note: string }[] = [];
let section = "";

/**
 * Records the section the next rows belong to.
 *
 * @example
 * ```ts
 * import { recordSection } from "./report.ts";
 * recordSection("1. Ledger");
 * ```
 */
export function recordSection(title: string): void {
  section = title.trim();
}

/**
 * Records each section header bench.ts prints (`console.log("\n3. Command requests ...")`) as the
 * section of the rows after it; everything printed still goes to the console unchanged.
 *
 * @example
 * ```ts
 * import { tapSections } from "./report.ts";
 * tapSections();
 * console.log("\n0. Start-up"); // printed, and recorded as the section
 * ```
 */
export function tapSections(): void {
  const log = console.log.bind(console);
  console.log = (...args: unknown[]) => {
    const first = args[0];
    if (typeof first === "string") {
      const m = /^\n(\d+[a-z]?\. .*)$/s.exec(first);
      if (m !== null) recordSection(m[1].split("\n")[0]);
    }
    log(...args);
  };
}

/**
 * Records one printed row (bench.ts's `row()` calls it with what it prints).
 *
 * @example
 * ```ts
 * import { recordRow } from "./report.ts";
 * recordRow("doctor, whole process", "210 ms", "ratio 1.40");
 * ```
 */
export function recordRow(label: string, value: string, note = ""): void {
  rows.push({ section, label: label.trim(), value: value.trim(), note: note.trim() });
}

/** A time as printed (`123 ms`, `45.6 ms`, `12.3 us`, `1.5 s`) in milliseconds, else null. */
function msOf(value: string): number | null {
  const m = /^(\d+(?:\.\d+)?) (ms|us|µs|s)$/.exec(value);
  if (m === null) return null;
  const n = Number(m[1]);
  return m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n / 1000;
}

/**
 * The recorded rows as figures (pure over what was recorded; see the module doc for the rules).
 *
 * @example
 * ```ts
 * import { benchFigures } from "./report.ts";
 * benchFigures().filter((f) => f.ratio !== null).length; // the rows that print a ratio
 * ```
 */
export function benchFigures(): BenchFigure[] {
  return figuresOf(rows);
}

/**
 * {@link benchFigures} of given rows.
 *
 * @example
 * ```ts
 * import { figuresOf } from "./report.ts";
 * figuresOf([{ section: "s", label: "x", value: "20.0 ms", note: "2.00x the floor" }])[0].floor?.ms; // 10
 * ```
 */
export function figuresOf(
  given: readonly { section: string; label: string; value: string; note: string }[],
): BenchFigure[] {
  const lastFloor = new Map<string, { label: string; ms: number | null }>();
  const ratioIn = (note: string) => {
    const m = /(\d+(?:\.\d+)?)x\b/.exec(note) ?? /\bratio (\d+(?:\.\d+)?)/.exec(note);
    return m === null ? null : Number(m[1]);
  };
  const targetIn = (note: string) => {
    const t = /target <= (\d+(?:\.\d+)?)/.exec(note);
    return t === null ? null : Number(t[1]);
  };
  const out: BenchFigure[] = [];
  for (const r of given) {
    const isFloor = /^(\(?)floor\b/i.test(r.label);
    const ms = msOf(r.value);
    if (isFloor) {
      lastFloor.set(r.section, { label: r.label, ms });
      // A floor printed after its figure carries the figure's ratio (`doctor ...`, then
      // `floor: ... ratio 2.26`): it is that figure's.
      const prev = out.at(-1);
      const ratio = ratioIn(r.note);
      if (prev !== undefined && prev.section === r.section && !prev.isFloor && ratio !== null) {
        if (prev.ratio === null) {
          out[out.length - 1] = {
            ...prev,
            ratio,
            floor: { label: r.label, ms },
            target: prev.target ?? targetIn(r.note),
          };
        }
      }
      out.push({ ...r, ms, ratio: null, floor: null, target: null, isFloor });
      continue;
    }
    const ratio = ratioIn(r.note);
    const row = lastFloor.get(r.section);
    // The section's floor row, when the printed ratio is the figure over it (to its rounding);
    // else the floor the ratio implies, labelled by the note that names it.
    const derived = ms === null || ratio === null || ratio === 0 ? null : ms / ratio;
    const matches = row !== undefined && row.ms !== null && derived !== null &&
      Math.abs(row.ms - derived) <= 0.02 * row.ms;
    out.push({
      ...r,
      ms,
      ratio,
      floor: ratio === null
        ? null
        : matches
        ? { label: row.label, ms: row.ms }
        : { label: r.note, ms: derived },
      target: targetIn(r.note),
      isFloor,
    });
  }
  return out;
}

/** Text safe inside SVG. */
function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  );
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

function fmtMs(ms: number | null): string {
  if (ms === null) return "?";
  return ms >= 100
    ? `${ms.toFixed(0)} ms`
    : ms >= 1
    ? `${ms.toFixed(1)} ms`
    : `${ms.toFixed(3)} ms`;
}

/** A figure's value as the chart says it: its time, else what the row printed (a rate). */
function shownValue(f: BenchFigure): string {
  return f.ms === null ? f.value : fmtMs(f.ms);
}

/** A figure's floor as the chart says it: its time, else the note that names it. */
function shownFloor(f: BenchFigure): string {
  return f.floor?.ms === null || f.floor?.ms === undefined
    ? clip(f.floor?.label ?? "", 40)
    : fmtMs(f.floor.ms);
}

/**
 * The chart: one pair of bars per figure with a ratio, the floor's (grey, always one unit) and
 * the figure's (its ratio in units; green within its target, red past it, blue without one),
 * with a dashed line at the target; bars past 10 units are cut at 10 and say so.
 *
 * @example
 * ```ts
 * import { benchSvg, figuresOf } from "./report.ts";
 * benchSvg(figuresOf([{ section: "s", label: "x", value: "20.0 ms", note: "2.00x the floor" }]))
 *   .startsWith("<svg"); // true
 * ```
 */
export function benchSvg(figures: readonly BenchFigure[], title = "agentteams bench"): string {
  const shown = figures.filter((f) => f.ratio !== null);
  const cap = 10;
  const maxUnits = Math.min(
    cap,
    Math.max(2, ...shown.map((f) => Math.max(f.ratio ?? 0, f.target ?? 0))),
  );
  const left = 430;
  const width = 1100;
  const unit = (width - left - 190) / maxUnits;
  const rowH = 34;
  const top = 50;
  let y = top;
  const parts: string[] = [];
  let lastSection = "";
  for (const f of shown) {
    if (f.section !== lastSection) {
      lastSection = f.section;
      y += 8;
      parts.push(
        `<text x="10" y="${y + 12}" font-weight="bold">${esc(clip(f.section, 120))}</text>`,
      );
      y += 20;
    }
    const ratio = f.ratio ?? 0;
    const over = f.target !== null && ratio > f.target;
    const color = f.target === null ? "#4477aa" : over ? "#cc3311" : "#228833";
    const w = Math.min(ratio, cap) * unit;
    parts.push(
      `<text x="10" y="${y + 11}">${esc(clip(f.label, 62))}</text>`,
      `<rect x="${left}" y="${y}" width="${unit.toFixed(1)}" height="11" fill="#bbbbbb">` +
        `<title>${esc(f.floor?.label ?? "")}: ${fmtMs(f.floor?.ms ?? null)}</title></rect>`,
      `<rect x="${left}" y="${y + 13}" width="${w.toFixed(1)}" height="11" fill="${color}">` +
        `<title>${esc(f.label)}: ${esc(f.value)}</title></rect>`,
      `<text x="${(left + Math.max(w, unit) + 6).toFixed(1)}" y="${y + 22}">` +
        `${ratio.toFixed(2)}x${ratio > cap ? " (cut at 10x)" : ""}: ${esc(shownValue(f))} vs ` +
        `${esc(shownFloor(f))}${f.target !== null ? ` (target ≤ ${f.target})` : ""}</text>`,
    );
    if (f.target !== null && f.target <= cap) {
      const tx = left + f.target * unit;
      parts.push(
        `<line x1="${tx.toFixed(1)}" y1="${y - 2}" x2="${tx.toFixed(1)}" y2="${y + 26}" ` +
          `stroke="#000" stroke-dasharray="3,2"/>`,
      );
    }
    y += rowH;
  }
  const height = y + 20;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
    `<text x="10" y="40" fill="#555">grey: the floor measured in the same run (1x); ` +
    `colour: the figure as a multiple of it (green within its target, red past it); ` +
    `dashed: the target</text>`,
    ...parts,
    `</svg>`,
    "",
  ].join("\n");
}

/** Facts about the run, for the JSON. */
export interface BenchMeta {
  /** `quick` or `full`. */
  readonly mode: string;
  /** When it ran (ISO). */
  readonly time: string;
}

/**
 * Writes `<dir>/bench.json` (the run, the machine and every figure) and `<dir>/bench.svg` (the
 * chart), atomically each (a temp file renamed over it); says where, and returns their paths.
 *
 * @example
 * ```ts
 * import { writeBenchReport } from "./report.ts";
 * const { json, svg } = await writeBenchReport("dist", { mode: "quick", time: new Date().toISOString() });
 * ```
 */
export async function writeBenchReport(
  dir: string,
  meta: BenchMeta,
): Promise<{ json: string; svg: string }> {
  await Deno.mkdir(dir, { recursive: true });
  const figures = benchFigures();
  const machine = {
    os: Deno.build.os,
    arch: Deno.build.arch,
    cpus: navigator.hardwareConcurrency,
    deno: Deno.version.deno,
    loadavg: Deno.loadavg(),
    osRelease: Deno.osRelease(),
  };
  const json = `${dir}/bench.json`;
  const svg = `${dir}/bench.svg`;
  const put = async (path: string, text: string) => {
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
  };
  await put(json, JSON.stringify({ ...meta, machine, figures }, null, 2) + "\n");
  await put(svg, benchSvg(figures, `agentteams bench (${meta.mode}), ${meta.time}`));
  console.log(`\nreport: ${json} and ${svg} (${figures.length} rows)`);
  return { json, svg };
}
