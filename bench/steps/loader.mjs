/**
 * A module hook for `bench/steps.ts` (registered by `hook.mjs`): Effect's run loop and effect
 * constructor, as loaded, get a call to the tally in `hook.mjs`. Only the loaded text changes;
 * `node_modules` is left as it is.
 */
const patches = [
  {
    file: "/node_modules/effect/dist/esm/internal/fiberRuntime.js",
    edits: [
      // Each step of the run loop is counted, and what it runs becomes the site of the effects it makes.
      [
        "    while (true) {\n      if ((this.currentRuntimeFlags & OpSupervision) !== 0) {",
        "    while (true) {\n      globalThis.__effectStep?.(cur);\n      if ((this.currentRuntimeFlags & OpSupervision) !== 0) {"
      ],
      // A continuation taken off the stack: the effects it makes belong to the code that pushed it.
      [
        "    const item = this._stack.pop();\n    if (item) {",
        "    const item = this._stack.pop();\n    if (item !== undefined && item.__site !== undefined) globalThis.__effectSiteNow = item.__site;\n    if (item) {"
      ]
    ]
  },
  {
    file: "/node_modules/effect/dist/esm/internal/core.js",
    edits: [[
      "  constructor(_op) {\n    this._op = _op;",
      "  constructor(_op) {\n    this._op = _op;\n    if (globalThis.__effectSite) this.__site = globalThis.__effectSite();"
    ]]
  }
]

export async function load(url, context, nextLoad) {
  const patch = patches.find((candidate) => url.endsWith(candidate.file))
  if (!patch) return nextLoad(url, context)
  const loaded = await nextLoad(url, { ...context, format: "module" })
  let source = String(loaded.source)
  for (const [from, to] of patch.edits) {
    if (!source.includes(from)) throw new Error(`bench/steps: ${patch.file} no longer has the text to patch (another effect version?)`)
    source = source.replace(from, to)
  }
  return { format: "module", source, shortCircuit: true }
}
