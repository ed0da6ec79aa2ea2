/** Pure parts of the document store: chunking, rank fusion, the WordPiece tokenizer, word vectors. */
import { describe, expect, it } from "vitest"
import { chunkText } from "../../src/documents/Chunking.ts"
import { fuse, RRF_K } from "../../src/documents/Ranking.ts"
import { embedText, wordVectors } from "../../src/embeddings/Glove.ts"
import { dot } from "../../src/embeddings/Vector.ts"
import { basicTokens, encode, parseVocab } from "../../src/embeddings/WordPiece.ts"
import { scaled } from "../support/time.ts"

describe("chunkText", () => {
  it("keeps short content whole and drops blank content", () => {
    expect(chunkText("  A short note.  ")).toEqual(["A short note."])
    expect(chunkText("   \n ")).toEqual([])
  })

  it("cuts long content at sentence ends, with overlap, covering every sentence", () => {
    const sentences = Array.from({ length: 120 }, (_, i) => `Sentence number ${i} says something about topic ${i % 7}.`)
    const chunks = chunkText(sentences.join(" "), { size: 400, overlap: 80 })
    expect(chunks.length).toBeGreaterThan(5)
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(400)
    // Every chunk but the last ends at a sentence end.
    for (const chunk of chunks.slice(0, -1)) expect(chunk.endsWith(".")).toBe(true)
    // Consecutive chunks share text (the overlap).
    for (let i = 1; i < chunks.length; i++) {
      const tail = chunks[i - 1]!.slice(-40)
      const shared = tail.split(" ").slice(1).join(" ")
      expect(chunks[i]!.includes(shared.slice(0, 15))).toBe(true)
    }
    for (const sentence of sentences) expect(chunks.some((chunk) => chunk.includes(sentence))).toBe(true)
  })

  it("never starts a chunk in the middle of a word and always terminates", () => {
    const text = "word ".repeat(5_000) + "x".repeat(3_000)
    const chunks = chunkText(text, { size: 1000, overlap: 200 })
    for (const chunk of chunks.slice(1)) expect(/^\S/.test(chunk)).toBe(true)
    expect(chunks.join(" ")).toContain("x".repeat(1000))
  })
})

describe("fuse (reciprocal rank)", () => {
  const hit = (documentId: string, ordinal = 0, similarity = 0.5) => ({
    documentId,
    ordinal,
    content: `${documentId}#${ordinal}`,
    similarity
  })

  it("adds 1/(k+rank) from each list and ranks a document by its best chunk", () => {
    const fused = fuse(
      [hit("a", 2, 0.9), hit("b", 0, 0.8), hit("a", 0, 0.7), hit("c", 0, 0.6)],
      [hit("b", 0), hit("c", 1)],
      10
    )
    expect(fused.map((f) => f.documentId)).toEqual(["b", "c", "a"])
    const b = fused[0]!
    expect(b.score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 12)
    expect(fused[1]!.score).toBeCloseTo(1 / (RRF_K + 3) + 1 / (RRF_K + 2), 12)
    expect(fused[1]!.snippet).toBe("c#0")
    expect(fused[2]!.score).toBeCloseTo(1 / (RRF_K + 1), 12)
    expect(fused[2]!.snippet).toBe("a#2")
    expect(fused[2]!.similarity).toBe(0.9)
  })

  it("keeps full-text-only documents with a null similarity, and honours the limit", () => {
    const fused = fuse([], [hit("x", 3), hit("y")], 1)
    expect(fused).toEqual([{ documentId: "x", score: 1 / (RRF_K + 1), similarity: null, snippet: "x#3" }])
  })
})

describe("WordPiece", () => {
  const vocab = parseVocab(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "runn", "##ing", ",", "cafe"].join("\n"))

  it("splits punctuation, lowercases and strips accents", () => {
    expect(basicTokens("Unaffable, CAFÉ!")).toEqual(["unaffable", ",", "cafe", "!"])
  })

  it("encodes greedy longest-match pieces between [CLS] and [SEP], unknown words as [UNK]", () => {
    expect(encode(vocab, "unaffable running, café xyz", 64)).toEqual([2, 4, 5, 6, 7, 8, 9, 10, 1, 3])
    expect(encode(vocab, "running running running", 4)).toEqual([2, 7, 8, 3])
  })
})

describe("packaged word vectors", () => {
  it("places paraphrases closer than unrelated text, and shared unknown names closer too", async () => {
    const vectors = await wordVectors()
    const car = embedText(vectors, "I need to repair my automobile")
    const vehicle = embedText(vectors, "fixing a broken car engine")
    const cake = embedText(vectors, "a recipe for chocolate cake")
    expect(dot(car, vehicle)).toBeGreaterThan(dot(car, cake) + 0.1)
    const name = embedText(vectors, "meeting with Zorbulaxian about the budget")
    const sameName = embedText(vectors, "Zorbulaxian sent the slides")
    const otherName = embedText(vectors, "Quenthilda sent the slides")
    expect(dot(name, sameName)).toBeGreaterThan(dot(name, otherName))
    for (const v of [car, vehicle, cake, embedText(vectors, "")]) expect(dot(v, v)).toBeCloseTo(1, 5)
  }, scaled(60_000))
})
