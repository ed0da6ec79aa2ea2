/**
 * The event-stream decoder and the chat stream's reading of its events (pure): line ends of every
 * kind, events split anywhere across reads, fields as the format defines them, and what `[DONE]`,
 * a JSON payload and the provider's errors mean.
 */
import { describe, expect, it } from "vitest"
import { EventStreamDecoder, readChatEvent, type ServerSentEvent } from "../../src/providers/EventStream.ts"

const decode = (pieces: ReadonlyArray<string>, end = true) => {
  const decoder = new EventStreamDecoder()
  const out: Array<ServerSentEvent> = []
  for (const piece of pieces) decoder.push(piece, out)
  if (end) decoder.end(out)
  return out
}

const sample = ": a comment\r\n\r\ndata: {\"n\":1}\r\n\r\nevent: message\ndata: {\"n\":\ndata: 2}\n\n" +
  "data:{\"n\":3}\r\rid: 7\nretry: 10\ndata: é€😀\r\n\r\nevent: ping\n\ndata: [DONE]\n\n"
const expected: Array<ServerSentEvent> = [
  { event: null, data: "{\"n\":1}" },
  { event: "message", data: "{\"n\":\n2}" },
  { event: null, data: "{\"n\":3}" },
  { event: null, data: "é€😀" },
  { event: "ping", data: "" },
  { event: null, data: "[DONE]" }
]

describe("EventStreamDecoder", () => {
  it("decodes LF, CRLF and bare CR line ends, comments, multi-line data and named events", () => {
    expect(decode([sample])).toEqual(expected)
  })

  it("gives the same events however the text is split across reads", () => {
    for (let cut = 1; cut < sample.length; cut++) {
      expect(decode([sample.slice(0, cut), sample.slice(cut)])).toEqual(expected)
    }
    expect(decode([...sample])).toEqual(expected)
  })

  it("keeps a last event the provider left unterminated, and only on the end", () => {
    expect(decode(["data: {\"n\":1}\n\ndata: {\"n\":2}"], false)).toEqual([{ event: null, data: "{\"n\":1}" }])
    expect(decode(["data: {\"n\":1}\n\ndata: {\"n\":2}"])).toEqual([
      { event: null, data: "{\"n\":1}" },
      { event: null, data: "{\"n\":2}" }
    ])
    expect(decode([])).toEqual([])
  })

  it("drops one space after the colon, keeps the rest, and treats a line without a colon as a field name", () => {
    expect(decode(["data:  two spaces\ndata\n\n"])).toEqual([{ event: null, data: " two spaces\n" }])
  })
})

describe("readChatEvent", () => {
  const read = (data: string, event: string | null = null) => readChatEvent({ event, data })

  it("reads [DONE] as the end and any other data as a JSON payload", () => {
    expect(read("[DONE]")).toEqual({ _tag: "Done" })
    expect(read("{\"choices\":[]}")).toEqual({ _tag: "Payload", value: { choices: [] } })
    expect(read("{\"n\":1}", "message")).toEqual({ _tag: "Payload", value: { n: 1 } })
  })

  it("reads data that is not JSON as malformed", () => {
    expect(read("{oops")).toMatchObject({ _tag: "Failed", reason: "malformed" })
  })

  it("reads an error payload or an error event as the provider's words", () => {
    expect(read("{\"error\":{\"message\":\"model overloaded\"}}")).toEqual({
      _tag: "Failed",
      reason: "stream_error",
      message: "model overloaded"
    })
    expect(read("{\"error\":\"plain words\"}")).toEqual({ _tag: "Failed", reason: "stream_error", message: "plain words" })
    expect(read("{\"error\":{\"code\":7}}")).toEqual({ _tag: "Failed", reason: "stream_error", message: "{\"code\":7}" })
    expect(read("{\"message\":\"quota gone\"}", "error")).toEqual({ _tag: "Failed", reason: "stream_error", message: "quota gone" })
    expect(read("{\"detail\":1}", "error")).toEqual({ _tag: "Failed", reason: "stream_error", message: "{\"detail\":1}" })
  })
})
