/**
 * A model's JSON answer read tolerantly (src/providers/JsonAnswer.ts): the whole text when it is
 * JSON, else the first balanced object or array in fences or prose that parses (repaired when need
 * be) and decodes with the operation's Schema; what was wrong otherwise, in words a model can act on.
 */
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { jsonSpans, readJsonAnswer, repairJson, withoutThinking } from "../../src/providers/JsonAnswer.ts"

const Summary = Schema.Struct({ title: Schema.String, summary: Schema.String })
const read = readJsonAnswer(Summary)
const wanted = { title: "Lamps", summary: "The keeper trims the wick." }

describe("reading a model's JSON answer", () => {
  it("takes the object wherever the model put it: alone, in fences, in prose, after thinking", () => {
    const object = JSON.stringify(wanted)
    for (
      const text of [
        object,
        `  ${object}\n`,
        `\`\`\`json\n${object}\n\`\`\``,
        `Sure! Here is the summary you asked for:\n\n${object}\n\nLet me know if you need more.`,
        `Note: I use the format {title, summary}.\n${object}`,
        `<think>They want {"title": ..., "summary": ...}; keep it short.</think>\n${object}`,
        `I'll open with a { that never closes. ${object}`
      ]
    ) {
      expect(read(text), text).toEqual(Either.right(wanted))
    }
  })

  it("repairs what models write instead of JSON: trailing commas, single and smart quotes, bare keys, line breaks in strings", () => {
    expect(read("{\"title\": \"Lamps\", \"summary\": \"The keeper trims the wick.\",}")).toEqual(Either.right(wanted))
    expect(read("{'title': 'Lamps', 'summary': 'The keeper trims the wick.'}")).toEqual(Either.right(wanted))
    expect(read("{\u201ctitle\u201d: \u201cLamps\u201d, \u201csummary\u201d: \u201cThe keeper trims the wick.\u201d}")).toEqual(
      Either.right(wanted)
    )
    expect(read("{title: \"Lamps\", summary: \"The keeper trims the wick.\"}")).toEqual(Either.right(wanted))
    expect(read("{\"title\": \"Lamps\", \"summary\": \"line one\nline two\"}")).toEqual(
      Either.right({ title: "Lamps", summary: "line one\nline two" })
    )
    // A string's own text is kept as written: an apostrophe, quotes, a comma before a brace.
    expect(read("{'title': 'Bob\\'s \"lamp\"', 'summary': 'a, }'}")).toEqual(Either.right({ title: "Bob's \"lamp\"", summary: "a, }" }))
    expect(repairJson("{a: 1, /* note */ 'b': [1, 2,], c: None, d: True} // done")).toBe(
      "{\"a\": 1,  \"b\": [1, 2], \"c\": null, \"d\": true} "
    )
  })

  it("skips JSON of another shape for the next that fits, and says what was wrong when none does", () => {
    expect(read("First a list [1, 2], then {\"title\": \"Lamps\", \"summary\": \"The keeper trims the wick.\"}")).toEqual(
      Either.right(wanted)
    )
    const wrongShape = read("{\"title\": \"Lamps\"}")
    expect(Either.isLeft(wrongShape) && wrongShape.left).toMatch(/^the JSON is not the shape asked for \(summary: is missing\)/)
    expect(read("I would rather not answer in JSON.")).toEqual(Either.left("the answer holds no JSON"))
    expect(read("")).toEqual(Either.left("the answer was empty"))
    expect(read("<think>only thinking, never an answer")).toEqual(Either.left("the answer was empty"))
  })

  it("takes any JSON value whole when the schema does", () => {
    const anything = readJsonAnswer(Schema.Unknown)
    expect(anything("[3, 1]")).toEqual(Either.right([3, 1]))
    expect(anything("\"just a string\"")).toEqual(Either.right("just a string"))
    expect(anything("Answer: ```\n{\"risk\": \"low\"}\n```")).toEqual(Either.right({ risk: "low" }))
  })

  it("finds balanced spans, outermost first, brackets inside strings ignored", () => {
    expect(jsonSpans("a [1] b {\"x\": [2, \"]\"]} c {")).toEqual(["[1]", "{\"x\": [2, \"]\"]}"])
    expect(jsonSpans("mismatched {\"a\": [1}] then {\"b\": 2}")).toEqual(["{\"b\": 2}"])
    expect(withoutThinking("<think>hmm {</think> answer ")).toBe("answer")
    expect(withoutThinking("<THINK>a</THINK>b<think>c</think>d")).toBe("bd")
  })
})
