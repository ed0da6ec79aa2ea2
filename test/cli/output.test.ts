/** The CLI's pure parts: the progress line, tables in 80 columns, what shell_exec answers, image and text sniffing. */
import { describe, expect, it } from "vitest"
import { textOf } from "../../src/cli/Docs.ts"
import { clip, table } from "../../src/cli/Output.ts"
import { progressLine } from "../../src/cli/Progress.ts"
import { shellResult } from "../../src/cli/RunView.ts"
import { sniffImage } from "../../src/sessions/Attachments.ts"

describe("the progress line", () => {
  const files = { label: "ingest", total: 100, unit: "items", noun: "files" } as const

  it("shows the share done, the count, the rate and the time left", () => {
    expect(progressLine(files, 25, 5, 80)).toBe("ingest [########......................]  25% 25/100 5.0 files/s ETA 15s")
  })

  it("says how long it took once done, and fits the width it is given", () => {
    expect(progressLine(files, 100, 125, 80)).toMatch(/100% 100\/100 0\.8 files\/s in 2m5s$/)
    expect(progressLine(files, 10, 1, 40).length).toBeLessThanOrEqual(40)
  })

  it("counts bytes in KB and MB", () => {
    expect(progressLine({ label: "download", total: 4 * 1024 * 1024, unit: "bytes" }, 1024 * 1024, 2, 100)).toMatch(
      /25% 1\.0 MB\/4\.0 MB 512\.0 KB\/s ETA 6s$/
    )
  })

  it("shows an unknown time left while nothing has moved", () => {
    expect(progressLine(files, 0, 0, 80)).toMatch(/0% 0\/100 0\.0 files\/s ETA \?$/)
  })
})

describe("tables", () => {
  it("fit 80 columns when not on a terminal, the widest column giving way", () => {
    const rendered = table(["ID", "NAME"], [["a".repeat(36), "n".repeat(90)]])
    for (const line of rendered.split("\n")) expect(line.length).toBeLessThanOrEqual(80)
    expect(rendered).toContain("a".repeat(36))
    expect(rendered).toContain("…")
  })

  it("clip marks a cut", () => {
    expect(clip("abcdef", 4)).toBe("abc…")
    expect(clip("abc", 4)).toBe("abc")
  })
})

describe("what shell_exec answers the model", () => {
  it("gives the exit status, the output and stderr marked", () => {
    expect(shellResult(0, "hello\n", "")).toBe("Exit status 0\nhello")
    expect(shellResult(2, "", "no such file\n")).toBe("Exit status 2\n[stderr]\nno such file")
    expect(shellResult("timeout", "", "")).toBe("Stopped: the command ran past its timeout")
  })

  it("cuts a long output and says so", () => {
    const answer = shellResult(0, "x".repeat(20_000), "")
    expect(answer.length).toBeLessThan(16_100)
    expect(answer).toMatch(/\[output cut at 16000 characters\]$/)
  })
})

describe("sniffing", () => {
  it("knows an image by its first bytes, not its name", () => {
    expect(sniffImage(Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00]))).toBe("image/png")
    expect(sniffImage(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg")
    expect(sniffImage(new TextEncoder().encode("RIFF\0\0\0\0WEBPVP8 "))).toBe("image/webp")
    expect(sniffImage(new TextEncoder().encode("# a markdown file"))).toBeUndefined()
  })

  it("stores text files and skips binary, blank and oversized ones", () => {
    expect(textOf(new TextEncoder().encode("notes"))).toEqual({ text: "notes" })
    expect(textOf(Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 0x00]))).toEqual({ skipped: "not a text file" })
    expect(textOf(new TextEncoder().encode(" \n\t"))).toEqual({ skipped: "empty" })
    expect(textOf(new TextEncoder().encode("x".repeat(1_000_001)))).toEqual({ skipped: "over 1000000 characters" })
  })
})
