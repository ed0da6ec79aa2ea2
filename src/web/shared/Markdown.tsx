/**
 * Markdown as the assistant writes it: rendered by marked, sanitised by DOMPurify (no script, no
 * event handlers, no `javascript:` URLs: DOMPurify's own URI rule), links opened in a new tab with `rel="noopener noreferrer"`,
 * and code blocks highlighted by highlight.js, whose core and each language are loaded only when a
 * block needs them (they stay out of the first bundle).
 */
import DOMPurify from "dompurify"
import { marked } from "marked"
import { useEffect, useMemo, useRef } from "react"
import "./markdown.css"
import { renderDiagrams, renderMath, withMathPlaceholders } from "./richBlocks.ts"

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank")
    node.setAttribute("rel", "noopener noreferrer")
  }
})

export const renderMarkdown = (text: string): string =>
  DOMPurify.sanitize(marked.parse(withMathPlaceholders(text), { async: false, gfm: true, breaks: true }), {
    FORBID_TAGS: ["style", "form", "input", "button", "iframe"],
    FORBID_ATTR: ["style"]
  })

type Loader = () => Promise<{ default: import("highlight.js").LanguageFn }>
const languages: Record<string, Loader> = {
  javascript: () => import("highlight.js/lib/languages/javascript"),
  typescript: () => import("highlight.js/lib/languages/typescript"),
  python: () => import("highlight.js/lib/languages/python"),
  bash: () => import("highlight.js/lib/languages/bash"),
  json: () => import("highlight.js/lib/languages/json"),
  xml: () => import("highlight.js/lib/languages/xml"),
  css: () => import("highlight.js/lib/languages/css"),
  sql: () => import("highlight.js/lib/languages/sql"),
  go: () => import("highlight.js/lib/languages/go"),
  rust: () => import("highlight.js/lib/languages/rust"),
  java: () => import("highlight.js/lib/languages/java"),
  c: () => import("highlight.js/lib/languages/c"),
  cpp: () => import("highlight.js/lib/languages/cpp"),
  yaml: () => import("highlight.js/lib/languages/yaml"),
  diff: () => import("highlight.js/lib/languages/diff"),
  markdown: () => import("highlight.js/lib/languages/markdown")
}
const aliases: Record<string, string> = {
  js: "javascript",
  ts: "typescript",
  tsx: "typescript",
  jsx: "javascript",
  py: "python",
  sh: "bash",
  shell: "bash",
  html: "xml",
  yml: "yaml",
  "c++": "cpp",
  md: "markdown"
}

let core: Promise<typeof import("highlight.js/lib/core").default> | undefined
const registered = new Map<string, Promise<boolean>>()

const languageReady = (name: string) => {
  const loader = languages[name]
  if (!loader) return Promise.resolve(false)
  core ??= import("highlight.js/lib/core").then((module) => module.default)
  let ready = registered.get(name)
  if (!ready) {
    ready = Promise.all([core, loader()]).then(([hljs, language]) => (hljs.registerLanguage(name, language.default), true))
    registered.set(name, ready)
  }
  return ready
}

const highlightWithin = (root: HTMLElement) => {
  for (const block of root.querySelectorAll<HTMLElement>("pre code[class*='language-']")) {
    const requested = /language-([\w+-]+)/.exec(block.className)?.[1]?.toLowerCase() ?? ""
    const name = aliases[requested] ?? requested
    void languageReady(name).then(async (ok) => {
      if (!ok || !block.isConnected || block.dataset.highlighted) return
      ;(await core!).highlightElement(block)
    })
  }
}

/** Copies text: the Clipboard API where the page may use it, else the older copy command (plain-HTTP deployments). */
export const copyText = async (text: string): Promise<void> => {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text)
  const area = document.createElement("textarea")
  area.value = text
  area.setAttribute("readonly", "")
  area.style.position = "fixed"
  area.style.opacity = "0"
  document.body.append(area)
  area.select()
  document.execCommand("copy")
  area.remove()
}

/**
 * Each code block gets a Copy button (the rendered HTML is sanitised, so buttons are added after),
 * and a block wider than the answer can be scrolled from the keyboard.
 */
const decorateCodeBlocks = (root: HTMLElement) => {
  for (const pre of root.querySelectorAll<HTMLPreElement>("pre")) {
    if (pre.parentElement?.classList.contains("code-block")) continue
    const frame = document.createElement("div")
    frame.className = "code-block"
    pre.replaceWith(frame)
    frame.append(pre)
    const button = document.createElement("button")
    button.type = "button"
    button.className = "code-copy"
    button.textContent = "Copy"
    button.setAttribute("aria-label", "Copy code")
    button.addEventListener("click", () => {
      void copyText(pre.textContent ?? "").then(() => {
        button.textContent = "Copied"
        button.setAttribute("aria-label", "Copied")
        setTimeout(() => {
          button.textContent = "Copy"
          button.setAttribute("aria-label", "Copy code")
        }, 2_000)
      })
    })
    frame.append(button)
    if (pre.scrollWidth > pre.clientWidth) pre.tabIndex = 0
  }
}

/** `settled`: the text is whole (not an answer still being written): its diagrams are drawn. */
export const Markdown = ({ text, settled = true }: { readonly text: string; readonly settled?: boolean }) => {
  const html = useMemo(() => renderMarkdown(text), [text])
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (!ref.current) return
    highlightWithin(ref.current)
    decorateCodeBlocks(ref.current)
    renderMath(ref.current)
    if (settled) renderDiagrams(ref.current)
  }, [html, settled])
  return <div className="markdown" ref={ref} dangerouslySetInnerHTML={{ __html: html }} />
}
