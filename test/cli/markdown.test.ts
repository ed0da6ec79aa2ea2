/**
 * The CLI chat's Markdown for the terminal (src/cli/Markdown.ts), as it streams: a line is drawn only
 * once complete (a `**` split across deltas is never shown raw), bold and inline code lose their
 * markers, list items get bullets, a fenced block is indented between rules naming its language.
 * Piped (as here: stdout is no terminal) there is no colour at all.
 */
import { describe, expect, it } from "vitest"
import { makeMarkdownLines } from "../../src/cli/Markdown.ts"

describe("the CLI's Markdown for the terminal", () => {
  it("draws complete lines only, and the rest at the end", () => {
    const md = makeMarkdownLines()
    expect(md.push("Some **bo")).toBe("")
    expect(md.push("ld** text\n- one\n")).toBe("Some bold text\n  • one\n")
    expect(md.push("2. two `x`")).toBe("")
    expect(md.flush()).toBe("  2. two x")
  })

  it("indents a fenced code block between rules naming its language, without colour when piped", () => {
    const md = makeMarkdownLines()
    const out = md.push("# Title\n```ts\nconst a = \"b\" // note\n```\nafter\n")
    expect(out).toBe("Title\n──── ts\n  const a = \"b\" // note\n────\nafter\n")
    expect(out).not.toContain("\u001b[")
  })
})
