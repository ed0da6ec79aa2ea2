/**
 * Screening layer 1: markup to text. An HTML part is parsed (htmlparser2) and split into what a
 * person sees and what is hidden from them: script, style and comments, and elements hidden by
 * `display:none`, `visibility:hidden`, a zero font size, zero opacity, off-screen positioning, the
 * `hidden` attribute, or text coloured like its background. The visible text (html-to-text) is what
 * the bot gets; the hidden text is kept only for the checks. Both are NFKC-normalised and cut at
 * 50,000 characters.
 */
import render from "dom-serializer"
import type { AnyNode, Element } from "domhandler"
import { convert } from "html-to-text"
import { parseDocument } from "htmlparser2"

export const maxTextLength = 50_000

export interface MarkupText {
  /** What a reader sees, as plain text. */
  readonly visible: string
  /** Text a reader does not see (hidden elements, comments); never delivered. */
  readonly hidden: string
  /** Why text was hidden: `display:none`, `font-size:0`, `same-colour`, `comment`, … */
  readonly hiding: ReadonlyArray<string>
}

/** NFKC, line endings unified, cut to the limit. */
export const normalise = (text: string): string => text.normalize("NFKC").replace(/\r\n?/g, "\n").slice(0, maxTextLength)

const styleOf = (element: Element): Map<string, string> => {
  const style = new Map<string, string>()
  for (const declaration of (element.attribs.style ?? "").split(";")) {
    const colon = declaration.indexOf(":")
    if (colon > 0) {
      style.set(
        declaration.slice(0, colon).trim().toLowerCase(),
        declaration.slice(colon + 1).trim().toLowerCase().replace(/\s*!important$/, "")
      )
    }
  }
  return style
}

const namedColours: Record<string, string> = { white: "#ffffff", black: "#000000", red: "#ff0000", transparent: "transparent" }

/** A CSS colour as `#rrggbb` (or `transparent`), when it can be read. */
export const colourOf = (value: string | undefined): string | undefined => {
  if (!value) return undefined
  const v = value.trim().toLowerCase()
  if (namedColours[v]) return namedColours[v]
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/.exec(v)
  if (short) return `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`
  if (/^#[0-9a-f]{6}$/.test(v)) return v
  const rgb = /^rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*([\d.]+)\s*)?\)$/.exec(v)
  if (rgb) {
    if (rgb[4] !== undefined && Number(rgb[4]) === 0) return "transparent"
    return "#" + [rgb[1], rgb[2], rgb[3]].map((n) => Math.min(255, Number(n)).toString(16).padStart(2, "0")).join("")
  }
  return undefined
}

/** Nearly the same colour: text a reader cannot tell from its background. */
const indistinguishable = (a: string, b: string) => {
  if (a === "transparent" || b === "transparent") return false
  const channels = (c: string) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16))
  const [x, y] = [channels(a), channels(b)]
  return x.reduce((sum, v, i) => sum + Math.abs(v - y[i]!), 0) < 30
}

const cssLength = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined
  const match = /^(-?[\d.]+)(px|pt|em|rem|%)?$/.exec(value)
  return match ? Number(match[1]) : undefined
}

/** Why an element hides its content from a reader, or undefined when it does not. */
const hiddenBy = (element: Element, background: string): string | undefined => {
  const name = element.name.toLowerCase()
  if (name === "script" || name === "style" || name === "template" || name === "noscript" || name === "head" || name === "title") {
    return name
  }
  if (element.attribs.hidden !== undefined) return "hidden-attribute"
  const style = styleOf(element)
  if (style.get("display") === "none") return "display:none"
  if (style.get("visibility") === "hidden" || style.get("visibility") === "collapse") return "visibility:hidden"
  const fontSize = cssLength(style.get("font-size"))
  if (fontSize !== undefined && fontSize <= 1) return "font-size:0"
  if (cssLength(style.get("opacity")) === 0) return "opacity:0"
  if (
    style.get("max-height") === "0" || style.get("max-height") === "0px" || style.get("height") === "0" || style.get("height") === "0px"
  ) {
    if (style.get("overflow") === "hidden") return "zero-size"
  }
  const position = style.get("position")
  if (position === "absolute" || position === "fixed") {
    for (const side of ["left", "top", "right", "text-indent"]) {
      const offset = cssLength(style.get(side))
      if (offset !== undefined && offset <= -500) return "off-screen"
    }
  }
  const indent = cssLength(style.get("text-indent"))
  if (indent !== undefined && indent <= -500) return "off-screen"
  const colour = colourOf(style.get("color") ?? element.attribs.color)
  if (colour && indistinguishable(colour, background)) return "same-colour"
  return undefined
}

const backgroundOf = (element: Element, inherited: string): string => {
  const style = styleOf(element)
  const declared = colourOf(style.get("background-color") ?? style.get("background")?.split(/\s+/)[0] ?? element.attribs.bgcolor)
  return declared && declared !== "transparent" ? declared : inherited
}

const textOf = (nodes: ReadonlyArray<AnyNode>): string =>
  nodes
    .map((node) => ("data" in node && node.type === "text" ? node.data : "children" in node ? textOf(node.children as Array<AnyNode>) : ""))
    .join(" ")

/** Splits an HTML part into visible and hidden text. */
export const fromHtml = (html: string): MarkupText => {
  const document = parseDocument(html.slice(0, maxTextLength * 4), { decodeEntities: true })
  const hidden: Array<string> = []
  const hiding = new Set<string>()
  const prune = (nodes: Array<AnyNode>, background: string) => {
    for (let i = nodes.length - 1; i >= 0; i--) {
      const node = nodes[i]!
      if (node.type === "comment") {
        const data = (node as unknown as { data: string }).data.trim()
        if (data) {
          hidden.push(data)
          hiding.add("comment")
        }
        nodes.splice(i, 1)
        continue
      }
      if (node.type === "tag" || node.type === "script" || node.type === "style") {
        const element = node as Element
        const reason = hiddenBy(element, background)
        if (reason) {
          const text = textOf(element.children as Array<AnyNode>).trim()
          if (text && reason !== "style" && reason !== "head" && reason !== "title") {
            hidden.push(text)
            hiding.add(reason)
          }
          nodes.splice(i, 1)
          continue
        }
        prune(element.children as Array<AnyNode>, backgroundOf(element, background))
      }
    }
  }
  prune(document.children as Array<AnyNode>, "#ffffff")
  const visible = convert(render(document), {
    wordwrap: false,
    selectors: [
      { selector: "img", format: "skip" },
      { selector: "a", options: { hideLinkHrefIfSameAsText: true, ignoreHref: false } }
    ]
  })
  return { visible: normalise(visible), hidden: normalise(hidden.reverse().join("\n")), hiding: [...hiding] }
}
