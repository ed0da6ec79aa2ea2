/**
 * A bot's answer as Markdown for the terminal, line by line as it streams: headings and **bold** in
 * bold, `code` in cyan, list items with a bullet, fenced code blocks indented with a rule naming the
 * language and a light highlighting (keywords, strings, comments). Colour follows `style` (none when
 * piped or with NO_COLOR); the words stay as written. A line is drawn once complete, so a half
 * streamed `**` is never shown raw and then redrawn.
 */
import { style } from "./Output.ts"

const keywords =
  /\b(const|let|var|function|return|if|else|for|while|import|from|export|class|def|async|await|new|try|catch|throw|type|interface|true|false|null|None|True|False)\b/g

/** One line of code with its keywords, strings and comments marked. */
export const highlight = (line: string): string => {
  const comment = /(\/\/|#)(?!!).*$/.exec(line)
  const code = comment ? line.slice(0, comment.index) : line
  const marked = code
    .split(/("[^"]*"|'[^']*'|`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? style.green(part) : part.replace(keywords, (word) => style.cyan(word))))
    .join("")
  return comment ? `${marked}${style.dim(comment[0])}` : marked
}

/** Bold and inline code inside a line of text. */
const inline = (text: string) =>
  text
    .replace(/`([^`]+)`/g, (_, code: string) => style.cyan(code))
    .replace(/\*\*([^*]+)\*\*|__([^_]+)__/g, (_, a: string | undefined, b: string | undefined) => style.bold(a ?? b ?? ""))

/** Renders complete lines; `push` answers what can be drawn now, `flush` the rest at the answer's end. */
export const makeMarkdownLines = () => {
  let pending = ""
  let inCode = false
  const line = (text: string): string => {
    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(text)
    if (fence) {
      inCode = !inCode
      return style.dim(inCode ? `──── ${fence[2] || "code"}` : "────")
    }
    if (inCode) return `  ${highlight(text)}`
    const heading = /^(#{1,6})\s+(.*)$/.exec(text)
    if (heading) return style.bold(inline(heading[2]!))
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(text)
    if (bullet) return `${bullet[1]}  • ${inline(bullet[2]!)}`
    const numbered = /^(\s*)(\d+)[.)]\s+(.*)$/.exec(text)
    if (numbered) return `${numbered[1]}  ${numbered[2]}. ${inline(numbered[3]!)}`
    return inline(text)
  }
  return {
    push: (delta: string): string => {
      pending += delta
      const cut = pending.lastIndexOf("\n")
      if (cut < 0) return ""
      const complete = pending.slice(0, cut).split("\n")
      pending = pending.slice(cut + 1)
      return complete.map((text) => `${line(text)}\n`).join("")
    },
    flush: (): string => {
      const rest = pending
      pending = ""
      inCode = false
      return rest.length > 0 ? line(rest) : ""
    }
  }
}
