/**
 * The messaging bridge's pure parts: the routing table and its wake words, splitting a long reply,
 * and decoding the chat server's messages (isFromMe as a string, dates as text).
 */
import { describe, expect, it } from "vitest"
import { ChatMessage, contentOf, decodeOr } from "../../integrations/msgbridge/message.ts"
import { decide, type RouteChannel, splitText, wakeWordsOf } from "../../integrations/msgbridge/routing.ts"

const route = (requireMention: boolean, binding: Partial<RouteChannel["binding"]> = {}, botName: string | null = null): RouteChannel => ({
  channel: { id: "c", name: "c", bot_id: "jarvis", require_mention: requireMention },
  binding: { wake_words: [], use_bot_wake_word: false, ...binding },
  botName
})

describe("the routing table", () => {
  it("runs every message when require_mention is off, wake words or not", () => {
    expect(decide(route(false, { wake_words: ["zeta"] }), { text: "hello", fromMe: false }, ["alpha"])).toEqual({
      action: "run",
      reason: "every-message"
    })
  })
  it("runs the owner's own messages always", () => {
    expect(decide(route(true), { text: "hello", fromMe: true }, [])).toEqual({ action: "run", reason: "own-device" })
  })
  it("with require_mention on: runs on a wake word from any source, else stores", () => {
    const mention = route(true, { wake_words: ["Zeta"], use_bot_wake_word: true }, "Jarvis Prime")
    expect(decide(mention, { text: "hello", fromMe: false }, ["alpha"])).toEqual({ action: "store", reason: "no-wake-word" })
    expect(decide(mention, { text: "hey ZETA", fromMe: false }, [])).toMatchObject({ action: "run", wake_word: "Zeta" })
    expect(decide(mention, { text: "Alpha, go", fromMe: false }, ["alpha"])).toMatchObject({ action: "run", wake_word: "alpha" })
    expect(decide(mention, { text: "ask jarvis", fromMe: false }, [])).toMatchObject({ action: "run", wake_word: "jarvis" })
    expect(decide(mention, { text: "jarvis prime?", fromMe: false }, [])).toMatchObject({ action: "run" })
    // Without the binding's flag the bot's name and id are not wake words.
    expect(decide(route(true), { text: "ask jarvis", fromMe: false }, [])).toEqual({ action: "store", reason: "no-wake-word" })
  })
  it("combines the three sources without blanks or repeats", () => {
    expect(wakeWordsOf(route(true, { wake_words: [" zeta ", "", "alpha"], use_bot_wake_word: true }, "Jarvis"), ["alpha", "beta"])).toEqual(
      ["zeta", "alpha", "beta", "jarvis", "Jarvis"]
    )
  })
})

describe("splitting a reply", () => {
  it("keeps a short reply whole and cuts a long one at sentence or word boundaries within the limit", () => {
    expect(splitText("  short  ", 100)).toEqual(["short"])
    const long = Array.from({ length: 30 }, (_, i) => `Sentence ${i}.`).join(" ")
    const parts = splitText(long, 100)
    expect(parts.every((p) => p.length <= 100 && p.endsWith("."))).toBe(true)
    expect(parts.join(" ")).toBe(long)
    const paragraphs = `${"a".repeat(60)}\n\n${"b".repeat(60)}`
    expect(splitText(paragraphs, 100)).toEqual(["a".repeat(60), "b".repeat(60)])
    // No boundary at all: a hard cut.
    expect(splitText("x".repeat(250), 100)).toEqual(["x".repeat(100), "x".repeat(100), "x".repeat(50)])
  })
})

describe("the chat server's message", () => {
  it("reads isFromMe as a boolean or a string, and a date as a number or text", () => {
    const base = { guid: "g", text: "hi", chats: [{ guid: "iMessage;-;+1" }] }
    for (const [given, expected] of [[true, true], ["true", true], ["false", false], [false, false], [undefined, false]] as const) {
      const decoded = decodeOr(ChatMessage, { ...base, isFromMe: given })
      expect(decoded.ok && decoded.value.isFromMe, String(given)).toBe(expected)
    }
    const dated = decodeOr(ChatMessage, { ...base, dateCreated: "1764000000000" })
    expect(dated.ok && dated.value.dateCreated).toBe(1764000000000)
    expect(decodeOr(ChatMessage, { ...base, isFromMe: "maybe" }).ok).toBe(false)
    expect(decodeOr(ChatMessage, { ...base, guid: 5 }).ok).toBe(false)
    // No GUID: one derived from the message, the same for the same message, another for another.
    const derived = (text: string) => {
      const decoded = decodeOr(ChatMessage, { ...base, guid: undefined, text, dateCreated: 1764000000000 })
      return decoded.ok ? decoded.value.guid : undefined
    }
    expect(derived("no guid")).toMatch(/^derived:[0-9a-f]{32}$/)
    expect(derived("no guid")).toBe(derived("no guid"))
    expect(derived("another")).not.toBe(derived("no guid"))
  })
  it("names attachments when a message has no text", () => {
    const decoded = decodeOr(ChatMessage, {
      guid: "g",
      text: "\uFFFC",
      chats: [],
      attachments: [{ transferName: "IMG_1.heic", mimeType: "image/heic" }]
    })
    expect(decoded.ok && contentOf(decoded.value)).toBe("(attached: IMG_1.heic)")
  })
})
