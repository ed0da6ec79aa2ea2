/**
 * One way to trace (docs/architecture.md, "Spans and schedules"):
 * - a span is made through `telemetry/Spans.ts` alone (`traced`, `tracedFn`, `inSpan`, which make
 *   none when tracing is off): no file of `src/` outside `src/telemetry/` calls `Effect.fn` or
 *   `Effect.withSpan` (read from the files as text);
 * - every repository is made by `repository` (db/Repository.ts), whose spans are `traced`'s;
 * - each operation is one span, named `<Domain>.<method>`, and none when tracing is off.
 * The rules read from the tree each have a probe: the same check with one use added, which must find it.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Exit, Option, type Tracer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { repository } from "../../src/db/Repository.ts"
import { inSpan, traced, tracedFn } from "../../src/telemetry/Spans.ts"
import { root } from "../support/imports.ts"

const srcDir = path.join(root, "src")
const telemetryDir = path.join(srcDir, "telemetry")

const filesBelow = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return filesBelow(full)
    return /\.(ts|tsx)$/.test(entry.name) ? [full] : []
  })
const files = filesBelow(srcDir)
const relative = (file: string) => path.relative(srcDir, file)

const read = (file: string) => fs.readFileSync(file, "utf8")
/** The real tree, with one line added at the end of one file. */
const withLine =
  (file: string, line: string) => (candidate: string) => (candidate === file ? `${read(candidate)}\n${line}\n` : read(candidate))

/** Each `Effect.fn(` or `Effect.withSpan(` outside `src/telemetry/`, as `file:line`. */
const spanMakers = (read_: (file: string) => string) =>
  files
    .filter((file) => !file.startsWith(telemetryDir + path.sep))
    .flatMap((file) =>
      read_(file)
        .split("\n")
        .flatMap((line, i) => (/\bEffect\.(?:fn|withSpan)\(/.test(line) ? [`${relative(file)}:${i + 1}`] : []))
    )

/** The repository files (`*Repo.ts`) with fewer `repository(...)` calls than services (or none). */
const unwrappedRepositories = (read_: (file: string) => string) =>
  files
    .filter((file) => file.endsWith("Repo.ts"))
    .filter((file) => {
      const text = read_(file)
      const made = text.match(/\brepository\(/g)?.length ?? 0
      return made === 0 || made < (text.match(/extends Effect\.Service</g)?.length ?? 0)
    })
    .map(relative)

describe("spans in src/", () => {
  it("are made by telemetry/Spans.ts alone: no Effect.fn or Effect.withSpan elsewhere", () => {
    expect(files.length).toBeGreaterThan(100)
    expect(spanMakers(read)).toEqual([])
  })

  it("an Effect.fn is found (probe: a service method made with it)", () => {
    const file = path.join(srcDir, "sessions", "Sessions.ts")
    const probe = withLine(file, `export const probe = Effect.fn("Sessions.probe")(function* () {})`)
    expect(spanMakers(probe)).toEqual([expect.stringMatching(/^sessions\/Sessions\.ts:\d+$/)])
  })

  it("an Effect.withSpan is found (probe: a span around one effect)", () => {
    const file = path.join(srcDir, "providers", "Llm.ts")
    const probe = withLine(file, `export const probe = Effect.void.pipe(Effect.withSpan("Llm.probe"))`)
    expect(spanMakers(probe)).toEqual([expect.stringMatching(/^providers\/Llm\.ts:\d+$/)])
  })

  it("of a repository are repository's: every *Repo.ts makes its services with it", () => {
    expect(files.filter((file) => file.endsWith("Repo.ts")).length).toBeGreaterThan(20)
    expect(unwrappedRepositories(read)).toEqual([])
  })

  it("a repository made without it is found (probe: the bots' returning a plain object)", () => {
    const file = path.join(srcDir, "bots", "Repo.ts")
    const probe = (candidate: string) => (candidate === file ? read(candidate).replace(/\brepository\(/g, "plainObject(") : read(candidate))
    expect(unwrappedRepositories(probe)).toEqual(["bots/Repo.ts"])
  })
})

/** The name of the span the effect runs in, if any. */
const spanName = Effect.map(Effect.option(Effect.currentSpan), Option.map((span) => span.name))
/** The names of the span the effect runs in and of its parents, innermost first. */
const spanNames = Effect.map(Effect.option(Effect.currentSpan), (current) => {
  const names: Array<string> = []
  let at: Option.Option<Tracer.AnySpan> = current
  while (Option.isSome(at) && at.value._tag === "Span") {
    names.push(at.value.name)
    at = at.value.parent
  }
  return names
})
const tracingOff = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.withTracerEnabled(effect, false))

describe("traced, tracedFn, inSpan and repository", () => {
  const service = traced("Probe", {
    method: (n: number) => Effect.map(spanNames, (names) => ({ n, names })),
    value: spanName,
    plain: (n: number) => n + 1
  })

  it("run each call in one span named <Domain>.<method> when tracing is on", async () => {
    expect(await Effect.runPromise(service.method(1))).toEqual({ n: 1, names: ["Probe.method"] })
    expect(await Effect.runPromise(service.method(2).pipe(Effect.withSpan("Outer")))).toEqual({ n: 2, names: ["Probe.method", "Outer"] })
    expect(await Effect.runPromise(service.value)).toEqual(Option.some("Probe.value"))
    expect(await Effect.runPromise(tracedFn("Probe.fn", () => spanNames)())).toEqual(["Probe.fn"])
    expect(await Effect.runPromise(inSpan(spanNames, "Probe.effect", { attributes: { n: 1 } }))).toEqual(["Probe.effect"])
    expect(service.plain(1)).toBe(2)
  })

  it("make no span when tracing is off", async () => {
    expect(await tracingOff(service.method(1))).toEqual({ n: 1, names: [] })
    expect(await tracingOff(service.value)).toEqual(Option.none())
    expect(await tracingOff(tracedFn("Probe.fn", () => spanName)())).toEqual(Option.none())
    expect(await tracingOff(inSpan(spanName, "Probe.effect"))).toEqual(Option.none())
  })

  it("repository: each call one span (traced's), and a database failure a defect", async () => {
    const repo = repository("ProbeRepo", {
      find: (id: string) => Effect.map(spanNames, (names) => ({ id, names })),
      broken: Effect.fail(new SqlError({ cause: new Error("connection refused"), message: "connection refused" }))
    })
    expect(await Effect.runPromise(repo.find("a"))).toEqual({ id: "a", names: ["ProbeRepo.find"] })
    expect(await tracingOff(repo.find("a"))).toEqual({ id: "a", names: [] })
    const exit = await Effect.runPromiseExit(repo.broken)
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
  })
})
