/**
 * Reasoning that local models (DeepSeek R1, Qwen, served by Ollama, vLLM, llama.cpp) write inline as
 * `<think>…</think>` before their answer: it is the model's thinking, reported as such, not text of
 * the answer. Only a think block that opens the answer counts; the tag anywhere else is the answer's.
 */

const open = "<think>"
const close = "</think>"

/** A blocking answer split into its opening think block and the answer after it. */
export const splitThinking = (content: string): { readonly answer: string; readonly thinking: string } => {
  const start = content.trimStart()
  if (!start.startsWith(open)) return { answer: content, thinking: "" }
  const end = start.indexOf(close)
  // An unclosed block (the answer was cut): all of it was thinking.
  if (end < 0) return { answer: "", thinking: start.slice(open.length).trim() }
  return { answer: start.slice(end + close.length).trimStart(), thinking: start.slice(open.length, end).trim() }
}

export interface ThinkPart {
  readonly thinking: boolean
  readonly text: string
}

/**
 * The same split over a stream's deltas, where a tag may arrive in pieces (`<thi` then `nk>`): the
 * text that could still be the start of a tag is held back until the next delta says what it is.
 */
export class ThinkSplitter {
  private state: "before" | "inside" | "after" = "before"
  private held = ""

  push(delta: string): ReadonlyArray<ThinkPart> {
    if (this.state === "after") return [{ thinking: false, text: delta }]
    this.held += delta
    const out: Array<ThinkPart> = []
    if (this.state === "before") {
      const lead = this.held.trimStart()
      if (lead.length < open.length) {
        if (open.startsWith(lead)) return out
        return this.finish(out, this.held)
      }
      if (!lead.startsWith(open)) return this.finish(out, this.held)
      this.held = lead.slice(open.length)
      this.state = "inside"
    }
    const end = this.held.indexOf(close)
    if (end >= 0) {
      const thought = this.held.slice(0, end)
      if (thought) out.push({ thinking: true, text: thought })
      const rest = this.held.slice(end + close.length).trimStart()
      this.held = ""
      this.state = "after"
      if (rest) out.push({ thinking: false, text: rest })
      return out
    }
    // Keep back what may be the first characters of the closing tag.
    let keep = 0
    for (let n = Math.min(close.length - 1, this.held.length); n > 0; n--) {
      if (close.startsWith(this.held.slice(-n))) {
        keep = n
        break
      }
    }
    const thought = this.held.slice(0, this.held.length - keep)
    this.held = this.held.slice(this.held.length - keep)
    if (thought) out.push({ thinking: true, text: thought })
    return out
  }

  /** What is held back when the stream ends: an unclosed block's end was thinking, else it is text. */
  flush(): ReadonlyArray<ThinkPart> {
    const text = this.held
    this.held = ""
    if (!text) return []
    return [{ thinking: this.state === "inside", text }]
  }

  private finish(out: Array<ThinkPart>, text: string): ReadonlyArray<ThinkPart> {
    this.state = "after"
    this.held = ""
    if (text) out.push({ thinking: false, text })
    return out
  }
}
