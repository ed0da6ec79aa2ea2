/**
 * A bot's answer as Markdown for the terminal, line by line as it streams: headings and **bold** in
 * bold, `code` in cyan, list items with a bullet, fenced code blocks indented with a rule naming the
 * language and a light highlighting (keywords, strings, comments). Colour follows `style` (none when
 * piped or with NO_COLOR); the words stay as written. Text is drawn as it streams, but a half
 * streamed `**` or backquote is held until it closes, so it is never shown raw and then redrawn.
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

/**
 * How much of a line's text can be drawn now without a marker shown raw and redrawn: up to an
 * opened `**`, `__` or backquote that has not closed yet, or a last `*` or `_` that may become one.
 */
export const settledLength = (text: string): number => {
  let at = 0
  while (at < text.length) {
    const pair = text.startsWith("**", at) ? "**" : text.startsWith("__", at) ? "__" : text[at] === "`" ? "`" : undefined
    if (pair !== undefined) {
      const close = text.indexOf(pair, at + pair.length)
      if (close < 0) return at
      at = close + pair.length
    } else if ((text[at] === "*" || text[at] === "_") && at === text.length - 1) return at
    else at += 1
  }
  return at
}

/** A line whose start may still make it a fence, a heading or a list item: its kind is not known yet. */
const undecided = (head: string) => /^\s*(?:[`~]{0,2}|#{1,6}|[-*+]|\d{1,9}[.)]?)$/.test(head)

/** How a streamed line of text is drawn: what goes before it, and how each settled piece looks. */
interface LineKind {
  readonly lead: string
  /** Where the text starts, past the marker (`# `, `- `, `2. `). */
  readonly start: number
  readonly draw: (piece: string) => string
}

const kindOf = (text: string): LineKind | undefined => {
  if (/^\s*(```|~~~)/.test(text) || undecided(text)) return undefined
  const heading = /^#{1,6}\s+/.exec(text)
  if (heading) return { lead: "", start: heading[0].length, draw: (piece) => style.bold(inline(piece)) }
  const bullet = /^(\s*)[-*+]\s+/.exec(text)
  if (bullet) return { lead: `${bullet[1]}  • `, start: bullet[0].length, draw: inline }
  const numbered = /^(\s*)(\d+)[.)]\s+/.exec(text)
  if (numbered) return { lead: `${numbered[1]}  ${numbered[2]}. `, start: numbered[0].length, draw: inline }
  return { lead: "", start: 0, draw: inline }
}

/**
 * Renders an answer as it streams: text is drawn as it comes, each piece once its markers are
 * settled; code blocks (whose highlighting needs the whole line) and fences a line at a time.
 * `push` answers what can be drawn now, `flush` the rest at the answer's end.
 */
export const makeMarkdownLines = () => {
  let inCode = false
  /** The line being streamed, how it is drawn once that is known, and how much of its text is drawn. */
  let current = ""
  let kind: LineKind | undefined
  let drawn = 0
  /** A whole line not drawn while it streamed. */
  const whole = (text: string): string => {
    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(text)
    if (fence) {
      inCode = !inCode
      return style.dim(inCode ? `──── ${fence[2] || "code"}` : "────")
    }
    if (inCode) return `  ${highlight(text)}`
    // A mark past the end: the line is whole, so a lone `-` or `1.` is text, not a list item still to come.
    const known = kindOf(`${text}\u0000`) ?? { lead: "", start: 0, draw: inline }
    return `${known.lead}${known.draw(text.slice(known.start))}`
  }
  /** What of the current line can be drawn now. */
  const progress = (): string => {
    if (inCode) return ""
    let out = ""
    if (kind === undefined) {
      kind = kindOf(current)
      if (kind === undefined) return ""
      out += kind.lead
    }
    const rest = current.slice(kind.start + drawn)
    const settled = settledLength(rest)
    if (settled > 0) {
      out += kind.draw(rest.slice(0, settled))
      drawn += settled
    }
    return out
  }
  /** The current line, ended: what is left of it. */
  const end = (): string => {
    const [text, started, from] = [current, kind, drawn]
    current = ""
    kind = undefined
    drawn = 0
    return started === undefined ? whole(text) : started.draw(text.slice(started.start + from))
  }
  return {
    push: (delta: string): string => {
      let out = ""
      const lines = delta.split("\n")
      for (const [index, piece] of lines.entries()) {
        current += piece
        out += index < lines.length - 1 ? `${end()}\n` : progress()
      }
      return out
    },
    flush: (): string => {
      const out = current.length > 0 ? end() : ""
      inCode = false
      return out
    }
  }
}
