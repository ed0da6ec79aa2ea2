/** The CLI's pure parts: the progress line, tables in 80 columns, help's wrapping, ids by prefix, what shell_exec answers, image and text sniffing, a log line and `--since`. */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { textOf } from "../../src/cli/Docs.ts"
import { helpRequest, wrap } from "../../src/cli/Help.ts"
import { resolveId } from "../../src/cli/Ids.ts"
import { lineText, sinceOf } from "../../src/cli/Logs.ts"
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

  it("keep the first column whole and leave out columns from the right when cutting is not enough", () => {
    const id = "8a87e76e-ff71-4b60-8777-d58e58672dfa"
    const rendered = table(["ID", "STATUS", "BOT", "SOURCE", "CREATED", "PROMPT"], [[
      id,
      "running",
      "default",
      "api",
      "2026-11-29 06:19",
      "p".repeat(90)
    ]])
    for (const line of rendered.split("\n")) expect(line.length).toBeLessThanOrEqual(80)
    expect(rendered).toContain(id)
    expect(rendered.split("\n")[0]).toMatch(/^ID +STATUS +BOT/)
    expect(rendered).not.toContain("PROMPT")
  })

  it("clip marks a cut", () => {
    expect(clip("abcdef", 4)).toBe("abc…")
    expect(clip("abc", 4)).toBe("abc")
  })
})

describe("help", () => {
  it("wraps at word boundaries, a longer word keeping its own line", () => {
    expect(wrap("the quick brown fox jumps", 10)).toEqual(["the quick", "brown fox", "jumps"])
    expect(wrap("a /api/v1/admin/operations/backup b", 10)).toEqual(["a", "/api/v1/admin/operations/backup", "b"])
  })

  it("knows a help request, the version and a command to run apart", () => {
    expect(helpRequest([])).toEqual({ _tag: "Help", path: [] })
    expect(helpRequest(["--version"])).toEqual({ _tag: "Version" })
    expect(helpRequest(["docs", "ingest", "-h"])).toEqual({ _tag: "Help", path: ["docs", "ingest"] })
    expect(helpRequest(["help", "tasks"])).toEqual({ _tag: "Help", path: ["tasks"] })
    expect(helpRequest(["tasks", "list", "--json"])).toBeUndefined()
    expect(helpRequest(["chat", "--", "--help"])).toBeUndefined()
  })
})

describe("ids by prefix", () => {
  const ids = ["3f2a9c00-0000-4000-8000-000000000001", "3f2b1100-0000-4000-8000-000000000002"]
  it("takes a whole id, a unique prefix and a table's cut id, and names the candidates of an ambiguous one", async () => {
    expect(await Effect.runPromise(resolveId("task", "3f2a", ids))).toBe(ids[0])
    expect(await Effect.runPromise(resolveId("task", "3f2b1100-00…", ids))).toBe(ids[1])
    const ambiguous = await Effect.runPromise(Effect.flip(resolveId("task", "3f2", ids)))
    expect(ambiguous.message).toBe(`3f2 starts 2 task ids (${ids.join(", ")}); give more of it`)
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

describe("cairn logs", () => {
  const now = Date.parse("2026-11-30T12:00:00.000Z")

  it("reads --since as an age before now or as a date, and nothing else", () => {
    expect(sinceOf("30s", now)?.toISOString()).toBe("2026-11-30T11:59:30.000Z")
    expect(sinceOf("10m", now)?.toISOString()).toBe("2026-11-30T11:50:00.000Z")
    expect(sinceOf("2h", now)?.toISOString()).toBe("2026-11-30T10:00:00.000Z")
    expect(sinceOf("1d", now)?.toISOString()).toBe("2026-11-29T12:00:00.000Z")
    expect(sinceOf("2026-11-30T08:15:00Z", now)?.toISOString()).toBe("2026-11-30T08:15:00.000Z")
    for (const bad of ["yesterday", "10 minutes", "-5m", "5w", ""]) expect(sinceOf(bad, now)).toBeUndefined()
  })

  it("writes a line as time, level, message and annotations, its cause indented beneath", () => {
    const line = {
      type: "line" as const,
      id: "p-1",
      timestamp: "2026-11-30T12:00:01.234Z",
      level: "warning" as const,
      message: "Mailbox poll failed",
      annotations: { integration: "mailbox", attempt: 3 },
      spans: {},
      fiber: "#12",
      trace: null,
      cause: "Error: connection refused\n    at connect"
    }
    expect(lineText(line)).toBe(
      "12:00:01.234 WARNING Mailbox poll failed integration=mailbox attempt=3\n  Error: connection refused\n      at connect"
    )
    expect(lineText({ ...line, annotations: {}, cause: null })).toBe("12:00:01.234 WARNING Mailbox poll failed")
  })
})
