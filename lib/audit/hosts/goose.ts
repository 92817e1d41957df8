/**
 * Goose's reading of a recipe, from the goose sources (aaif-goose/goose, formerly block/goose, at
 * 2d5ca935: `crates/goose/src/recipe/mod.rs` `Recipe::from_content`,
 * `recipe/recipe_extension_adapter.rs`, `recipe/template_recipe.rs`):
 *
 * 1. **the recipe text is a MiniJinja template, rendered before YAML sees it**
 *    (`render_recipe_content_with_params`, with the parameters and their `default`s; a template
 *    with `{% extends %}` or `{% include %}` is rendered even to load it, pulling in files from the
 *    recipe's folder). A statement (`{% if %}`, `{% include %}`), a comment (`{# #}`), whitespace
 *    control (`{{-`, `-}}`) or an expression other than a plain parameter name (`{{ "\n..." }}`)
 *    can add, drop or join lines anywhere in the file, also from inside `instructions`: the keys
 *    goose reads may then not be the keys in the file. A plain `{{ name }}` is replaced by the
 *    parameter's value; a `default` written in the recipe holding a line break, a quote or a
 *    backslash can do the same. An `{{ … }}` MiniJinja can't parse is kept as text (`{% raw %}`);
 * 2. the YAML is serde_yaml 0.9: a duplicate key or a syntax error refuses the recipe, merge keys
 *    are not applied (`<<` is an unknown key), unknown keys are ignored; a `recipe:` key anywhere
 *    at the top selects its value as the recipe (not a mapping: refused);
 * 3. each extension is read by its `type` (`sse`, `stdio`, `builtin`, `platform`,
 *    `streamable_http`, `frontend`, `inline_python`, `websocket`; any other refuses the recipe);
 *    a missing or empty `available_tools` is every tool of the extension;
 * 4. goose adds extensions the file doesn't list: `analyze` (every tool) beside a `builtin`
 *    `developer` without one, and `summon` (every tool) whenever `sub_recipes` is set.
 *
 * The checks in lib/audit/check_goose.ts judge items 2–4; `gooseRenderRisk` is item 1.
 *
 * @module
 */

/** A recipe parameter as the render sees it: its written default, and whether it is a file. */
export interface GooseParameter {
  /** The `default` written in the recipe, if any. */
  readonly default?: string;
  /** `input_type: file`: goose replaces the value by the named file's content. */
  readonly file?: boolean;
}

/** The goose version the model was taken from. */
export const GOOSE_HOST = "goose (aaif-goose/goose at 2d5ca935)";

/** A plain parameter reference, as goose's `filter_complex_variables` accepts it. */
const PLAIN_VARIABLE = /^\s*[a-zA-Z_][a-zA-Z0-9_]*\s*$/;

/** What in a parameter's default can change the YAML once rendered into the text. */
const UNSAFE_DEFAULT = /[\r\n"'\\]/;

/**
 * Why goose's render of `text` may not be the text the audit reads, or null when every template
 * use is a plain parameter (`params`, by name) whose written default can't change the YAML and
 * that is not a file parameter.
 * An expression of words only (`{{ a or b }}`, or `{{hf model org}}`, which MiniJinja can't parse
 * and goose keeps as text) is judged by the defaults of the parameters it names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gooseRenderRisk } from "./goose.ts";
 * assert.equal(gooseRenderRisk("prompt: Review {{ path }}\n", new Map()), null);
 * assert.match(gooseRenderRisk("instructions: x {% if false %}\n", new Map()) ?? "", /^a `\{%` statement/);
 * ```
 */
export function gooseRenderRisk(
  text: string,
  params: ReadonlyMap<string, GooseParameter>,
): string | null {
  if (text.includes("{%")) {
    return "a `{%` statement, which goose renders before it reads the YAML, so it can keep, " +
      "drop or include lines anywhere in the recipe";
  }
  if (text.includes("{#")) {
    return "a `{#` comment, which goose renders before it reads the YAML, so it can swallow " +
      "lines anywhere in the recipe";
  }
  for (const m of text.matchAll(/\{\{(.*?)\}\}/gs)) {
    const inner = m[1];
    if (inner.startsWith("-") || inner.endsWith("-")) {
      return `whitespace control in ${
        JSON.stringify(m[0])
      }, which joins lines when goose renders it`;
    }
    // Words only: a plain name, `a or b`, or `{{hf model org}}` (which goose keeps as text); each
    // word that names a parameter is replaced by its value.
    if (!PLAIN_VARIABLE.test(inner) && !/^[\sA-Za-z0-9_]+$/.test(inner)) {
      return `the expression ${
        JSON.stringify(m[0])
      }, which goose renders before it reads the YAML, so its ` +
        "output (line breaks and quotes included) becomes part of the recipe";
    }
    for (const name of inner.trim().split(/\s+/)) {
      const p = params.get(name);
      if (p?.file === true) {
        return `the file parameter ${name}, whose value goose replaces by the content of the ` +
          "file it names, rendered into the recipe text before it reads the YAML";
      }
      const d = p?.default;
      if (d !== undefined && UNSAFE_DEFAULT.test(d)) {
        return `the parameter ${name}, whose default in the recipe holds a line break, quote or ` +
          "backslash that goose renders into the recipe text before it reads the YAML";
      }
    }
  }
  return null;
}
