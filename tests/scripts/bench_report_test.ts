/**
 * The bench report (scripts/bench/report.ts, issue 27 item 6): rows as bench.ts prints them
 * become figures beside their floors (a ratio in the row's note, or in the floor row printed
 * after its figure; the floor row's own time when the ratio is the figure over it), the chart
 * has a floor bar and a figure bar per ratio, and `writeBenchReport` writes both files.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  benchSvg,
  figuresOf,
  recordRow,
  recordSection,
  writeBenchReport,
} from "../../scripts/bench/report.ts";
import { removeTree, tempDir } from "../_helpers/mod.ts";

const ROWS = [
  { section: "0. Start-up", label: "floor: an empty `deno run`", value: "63.6 ms", note: "" },
  {
    section: "0. Start-up",
    label: "--version from the release bundle, whole process",
    value: "97.1 ms",
    note: "1.53x the floor (target <= 1.6)",
  },
  { section: "5. Doctor", label: "doctor, whole process", value: "335 ms", note: "" },
  {
    section: "5. Doctor",
    label: "floor: bare deno start + bare bwrap",
    value: "149 ms",
    note: "ratio 2.26",
  },
  {
    section: "8. Authorization",
    label: "grant verify of 10000 rows, whole process (the CLI)",
    value: "900 ms",
    note: "3.00x deno start + that floor (300 ms)",
  },
  { section: "1. Ledger", label: "append (fsync) at 0 rows", value: "1234 rows/s", note: "" },
];

Deno.test("bench report: each figure with a ratio gets its floor (the floor row's time when the ratio is over it, else the implied one) and its target; others are kept as printed", () => {
  const f = figuresOf(ROWS);
  assert.equal(f.length, ROWS.length);
  assert.deepEqual(f[0].isFloor, true);
  assert.deepEqual([f[1].ratio, f[1].floor, f[1].target], [1.53, {
    label: "floor: an empty `deno run`",
    ms: 63.6,
  }, 1.6]);
  // A floor printed after its figure gives that figure its ratio.
  assert.deepEqual([f[2].ratio, f[2].floor], [2.26, {
    label: "floor: bare deno start + bare bwrap",
    ms: 149,
  }]);
  assert.equal(f[3].ratio, null, "a floor is no figure");
  // No floor row in the section: the floor is what the ratio implies, named by the note.
  assert.equal(f[4].floor?.ms, 300);
  assert.match(f[4].floor?.label ?? "", /that floor/);
  assert.deepEqual([f[5].ms, f[5].ratio, f[5].value], [null, null, "1234 rows/s"]);
});

Deno.test("bench report: the chart draws a floor bar and a figure bar per ratio, the target dashed, past-target red; text is escaped", () => {
  const svg = benchSvg(figuresOf([
    ...ROWS,
    {
      section: "9. <gate>",
      label: "gate & co",
      value: "50.0 ms",
      note: "2.50x the floor (target <= 2)",
    },
  ]));
  assert.ok(svg.startsWith("<svg ") && svg.trimEnd().endsWith("</svg>"));
  // Four figures with ratios: two bars each, plus the background.
  assert.equal(svg.match(/<rect /g)?.length, 1 + 4 * 2);
  assert.equal(svg.match(/stroke-dasharray/g)?.length, 2, "a dashed line per target");
  assert.match(svg, /fill="#cc3311"/, "2.5x past a target of 2 is red");
  assert.match(svg, /fill="#228833"/, "1.53x within 1.6 is green");
  assert.match(svg, /9\. &lt;gate&gt;/);
  assert.match(svg, /gate &amp; co/);
  assert.doesNotMatch(svg, /<gate>/);
});

Deno.test("bench report: writeBenchReport writes bench.json (the run, the machine, every recorded row) and bench.svg", async () => {
  const dir = await tempDir("bench-report");
  try {
    recordSection("0. Start-up");
    recordRow("floor: an empty `deno run`", "40.0 ms");
    recordRow("  --version, whole process", "60.0 ms", "1.50x the floor (target <= 1.6)");
    const out = await writeBenchReport(join(dir, "dist"), { mode: "quick", time: "t" });
    const json = JSON.parse(await Deno.readTextFile(out.json));
    assert.equal(json.mode, "quick");
    assert.equal(json.machine.cpus, navigator.hardwareConcurrency);
    const fig = json.figures.at(-1);
    assert.deepEqual([fig.label, fig.ratio, fig.floor.ms, fig.target], [
      "--version, whole process",
      1.5,
      40,
      1.6,
    ]);
    assert.match(await Deno.readTextFile(out.svg), /--version, whole process/);
  } finally {
    await removeTree(dir);
  }
});
