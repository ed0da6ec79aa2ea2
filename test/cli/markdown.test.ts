/**
 * The CLI chat's Markdown for the terminal (src/cli/Markdown.ts), as it streams: text is drawn as it
 * comes, but a `**` or backquote split across deltas is held until it closes (never shown raw and
 * redrawn), a line's kind is known before it is drawn, bold and inline code lose their
 * markers, list items get bullets, a fenced block is indented between rules naming its language.
 * Piped (as here: stdout is no terminal) there is no colour at all.
 */
import { describe, expect, it } from "vitest"
import { makeMarkdownLines } from "../../src/cli/Markdown.ts"

describe("the CLI's Markdown for the terminal", () => {
  it("draws text as it streams, holding a marker until it closes and a line's start until its kind is known", () => {
    const md = makeMarkdownLines()
    expect(md.push("It is ")).toBe("It is ")
    expect(md.push("tea time.\n")).toBe("tea time.\n")
    expect(md.push("Some **bo")).toBe("Some ")
    expect(md.push("ld** text\n- one\n")).toBe("bold text\n  • one\n")
    expect(md.push("-")).toBe("")
    expect(md.push(" two `x")).toBe("  • two ")
    expect(md.push("y` end*")).toBe("xy end")
    expect(md.flush()).toBe("*")
    expect(md.push("2")).toBe("")
    expect(md.push(". three\n-\n")).toBe("  2. three\n-\n")
  })

  it("indents a fenced code block between rules naming its language, without colour when piped", () => {
    const md = makeMarkdownLines()
    const out = md.push("# Title\n```ts\nconst a = \"b\" // note\n```\nafter\n")
    expect(out).toBe("Title\n──── ts\n  const a = \"b\" // note\n────\nafter\n")
    expect(out).not.toContain("\u001b[")
  })
})
