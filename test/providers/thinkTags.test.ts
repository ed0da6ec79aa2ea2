/**
 * A local model's opening `<think>…</think>` is its reasoning: split from a whole answer, and from
 * a stream whose deltas cut the tags anywhere, without losing or reordering a character.
 */
import { describe, expect, it } from "vitest"
import { splitThinking, type ThinkPart, ThinkSplitter } from "../../src/providers/ThinkTags.ts"

const streamed = (deltas: ReadonlyArray<string>) => {
  const splitter = new ThinkSplitter()
  const parts: Array<ThinkPart> = deltas.flatMap((delta) => [...splitter.push(delta)])
  parts.push(...splitter.flush())
  return {
    thinking: parts.filter((p) => p.thinking).map((p) => p.text).join(""),
    answer: parts.filter((p) => !p.thinking).map((p) => p.text).join("")
  }
}

/** Every way of cutting `text` into two and three pieces. */
const cuts = (text: string): Array<Array<string>> => {
  const out: Array<Array<string>> = [[text]]
  for (let i = 1; i < text.length; i++) {
    out.push([text.slice(0, i), text.slice(i)])
    for (let j = i + 1; j < text.length; j++) out.push([text.slice(0, i), text.slice(i, j), text.slice(j)])
  }
  return out
}

describe("ThinkTags", () => {
  it("splits a whole answer's opening think block from the answer", () => {
    expect(splitThinking("<think>\nWeigh it.\n</think>\n\nYes.")).toEqual({ thinking: "Weigh it.", answer: "Yes." })
    expect(splitThinking("  <think>a</think>b")).toEqual({ thinking: "a", answer: "b" })
    expect(splitThinking("<think>cut off")).toEqual({ thinking: "cut off", answer: "" })
    expect(splitThinking("No tags here.")).toEqual({ thinking: "", answer: "No tags here." })
    // A tag later in the answer is the answer's (a model explaining the tags, say).
    expect(splitThinking("Use <think> tags.")).toEqual({ thinking: "", answer: "Use <think> tags." })
  })

  it("splits a stream the same wherever the deltas cut the tags", () => {
    const text = "<think>ab</think>cd"
    for (const deltas of cuts(text)) expect(streamed(deltas), JSON.stringify(deltas)).toEqual({ thinking: "ab", answer: "cd" })
  })

  it("passes an answer without a think block through whole, including what looked like a tag's start", () => {
    for (const deltas of cuts("<p>Hi</p>")) expect(streamed(deltas)).toEqual({ thinking: "", answer: "<p>Hi</p>" })
    expect(streamed(["<", "thi"])).toEqual({ thinking: "", answer: "<thi" })
    expect(streamed([" Hello", " world"])).toEqual({ thinking: "", answer: " Hello world" })
  })

  it("keeps an unclosed think block as thinking, ending with what could have been the closing tag", () => {
    expect(streamed(["<think>still going</th"])).toEqual({ thinking: "still going</th", answer: "" })
  })
})
