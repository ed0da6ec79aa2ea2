/**
 * Math (KaTeX) and diagrams (Mermaid) in an answer. Both libraries are large, so each is loaded
 * only when an answer has what it draws: the chat's first bundle stays as it was.
 *
 * Math is taken out of the text before markdown sees it (markdown would read `_` and `*` in it as
 * emphasis) and put back as empty placeholders holding the TeX, which KaTeX fills once loaded:
 * `$$…$$` and `\[…\]` as a block, `\(…\)` and `$…$` inline (a `$` before a digit, as in "$5 and
 * $10", is money, not math). Code, fenced or inline, is left as written.
 */

const escapeAttribute = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const block = (tex: string) => `\n\n<div class="math-block" data-tex="${escapeAttribute(tex.trim())}"></div>\n\n`
const inline = (tex: string) => `<span class="math-inline" data-tex="${escapeAttribute(tex.trim())}"></span>`

const replaceMath = (text: string) =>
  text
    .replace(/\$\$([\s\S]+?)\$\$/g, (_, tex: string) => block(tex))
    .replace(/\\\[([\s\S]+?)\\\]/g, (_, tex: string) => block(tex))
    .replace(/\\\(([\s\S]+?)\\\)/g, (_, tex: string) => inline(tex))
    .replace(/(^|[^\\$\w])\$(?!\s)([^$\n]+?)(?<!\s)\$(?!\d)/g, (_, before: string, tex: string) => `${before}${inline(tex)}`)

/** The text with its math made placeholders, code untouched; unchanged when it has no `$` or `\(`/`\[`. */
export const withMathPlaceholders = (text: string): string => {
  if (!/\$|\\\(|\\\[/.test(text)) return text
  // Fenced blocks and inline code spans keep their dollars.
  return text.split(/(```[\s\S]*?(?:```|$)|`[^`\n]+`)/g).map((part, index) => (index % 2 === 1 ? part : replaceMath(part))).join("")
}

let katex: Promise<typeof import("katex").default> | undefined

/** Draws the math placeholders in `root`; a formula KaTeX cannot read is shown as its TeX. */
export const renderMath = (root: HTMLElement) => {
  const pending = [...root.querySelectorAll<HTMLElement>("[data-tex]:not([data-drawn])")]
  if (pending.length === 0) return
  katex ??= Promise.all([import("katex"), import("katex/dist/katex.min.css")]).then(([module]) => module.default)
  void katex.then((library) => {
    for (const element of pending) {
      if (!element.isConnected) continue
      element.dataset.drawn = "true"
      library.render(element.dataset.tex ?? "", element, {
        displayMode: element.classList.contains("math-block"),
        throwOnError: false,
        output: "htmlAndMathml"
      })
    }
  })
}

let mermaid: Promise<typeof import("mermaid").default> | undefined
let drawn = 0

/**
 * Draws each `mermaid` code block of a settled answer as its diagram (strict: no script, no
 * click handlers); a diagram Mermaid cannot read stays as its code.
 */
export const renderDiagrams = (root: HTMLElement) => {
  const blocks = [...root.querySelectorAll<HTMLElement>("pre code.language-mermaid")]
  if (blocks.length === 0) return
  const dark = window.matchMedia("(prefers-color-scheme: dark)").matches
  mermaid ??= import("mermaid").then((module) => {
    module.default.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "default" })
    return module.default
  })
  void mermaid.then(async (library) => {
    for (const code of blocks) {
      const pre = code.closest("pre")
      if (!pre?.isConnected) continue
      const frame = pre.parentElement?.classList.contains("code-block") ? pre.parentElement : pre
      try {
        const { svg } = await library.render(`mermaid-${++drawn}`, code.textContent ?? "")
        const figure = document.createElement("figure")
        figure.className = "diagram"
        figure.setAttribute("role", "img")
        figure.setAttribute("aria-label", "Diagram")
        figure.dataset.testid = "diagram"
        figure.innerHTML = svg
        frame.replaceWith(figure)
      } catch {
        // Not a diagram Mermaid reads (or one still being written): the code stays.
      }
    }
  })
}
