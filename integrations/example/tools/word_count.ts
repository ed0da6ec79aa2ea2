import { defineTool } from "../../../src/sdk/index.ts"
import { words } from "./_words.ts"

export default defineTool({
  schema: {
    type: "function",
    function: {
      name: "example_word_count",
      description: "Counts the words of a text and names the longest one.",
      parameters: {
        type: "object",
        properties: { text: { type: "string", description: "The text to count" } },
        required: ["text"]
      }
    }
  },
  effect: "read",
  execute: (args) => {
    const list = words(String(args.text ?? ""))
    const longest = list.reduce((best, word) => (word.length > best.length ? word : best), "")
    return JSON.stringify({ words: list.length, longest })
  }
})
