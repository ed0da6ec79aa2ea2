/**
 * Budgets (issue 62, items 1-3) on both databases: the admin API, the cap under 200 concurrent
 * completions (every call reserves its worst case under the period row's lock, so the calls in
 * flight never hold more than the limit: asserted exactly), a spent budget refused with 429 and
 * Retry-After on every surface, the stream's `budget_exceeded` error event, the hook events fired
 * once per period, and the spend kept across a restart.
 */
import { Effect, Either } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { CreateBudget } from "../../src/budgets/Model.ts"
import { Hooks } from "../../src/hooks/Hooks.ts"
import { Llm } from "../../src/providers/Llm.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "../support/client.ts"
import { backends, createTestDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { scaled, until } from "../support/time.ts"

const budgetBody = withDefaults(CreateBudget)

/** A budget made through the admin API, as each test here makes its own. */
const newBudget = (on: Pick<TestServer, "call">, body: Parameters<typeof budgetBody>[0]) =>
  on.call((client) => client.budgets.create({ payload: budgetBody(body) }))

/** A completion through the proxy, with the static key unless `token` is given. */
const completeOn = (on: Pick<TestServer, "request">, token?: string, maxTokens = 50) =>
  on.request("/api/v1/llm/completions", {
    method: "POST",
    ...(token ? { auth: token } : {}),
    body: JSON.stringify({ messages: [{ role: "user", content: "hello there" }], max_tokens: maxTokens })
  })

/** The fake's usage for every answer here: 25 tokens. */
const usage = { prompt_tokens: 5, completion_tokens: 20, total_tokens: 25 }

describe.each(backends)("budgets (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  const hookEvents: Array<{ event: string; budget: string }> = []

  const env = {
    // Every admitted call reaches the provider at once and no per-credential cap refuses first:
    // what is refused here is refused by a budget.
    PROVIDER_CONCURRENCY_MAX: "400",
    RUNS_PER_CREDENTIAL_MAX: "400",
    LLM_MAX_RETRIES: "0",
    LLM_DEFAULT_MAX_TOKENS: "4000"
  }

  beforeAll(async () => {
    llm = await startFakeLlm({ record: false, defaultReply: { text: "fine", usage } })
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), ...env } })
    await server.run(
      Effect.flatMap(Hooks, (hooks) =>
        Effect.sync(() => {
          hooks.registerHook("budget_warning", (context) =>
            void hookEvents.push({ event: "budget_warning", budget: context.extra.budget_id }))
          hooks.registerHook("budget_exceeded", (context) =>
            void hookEvents.push({ event: "budget_exceeded", budget: context.extra.budget_id }))
        }))
    )
  })

  afterEach(async () => {
    llm.reset()
    llm.setDefaultReply({ text: "fine", usage })
    for (const budget of await server.call((client) => client.budgets.list())) {
      await server.call((client) => client.budgets.delete({ path: { id: budget.id } }))
    }
  })

  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  const status = (id: string) => server.call((client) => client.budgets.get({ path: { id } }))

  const complete = (token: string, maxTokens = 50) => completeOn(server, token, maxTokens)

  it("creates, lists, reads, changes and deletes budgets; reading needs usage:read and changing settings:write", async () => {
    const created = await newBudget(server, { scope: "bot", target: "default", period: "day", limit_usd: 5 })
    expect(created).toMatchObject({
      scope: "bot",
      target: "default",
      period: "day",
      limit_usd: 5,
      limit_tokens: null,
      action: "block",
      warn_at: 0.8
    })
    const listed = await server.call((client) => client.budgets.list())
    expect(listed.map((budget) => budget.id)).toEqual([created.id])
    expect(listed[0]).toMatchObject({ spent_usd: 0, reserved_usd: 0, left_usd: 5, left_tokens: null, in_flight: 0, state: "ok" })
    expect(listed[0]!.period_start!.getTime()).toBeLessThanOrEqual(Date.now())
    expect(listed[0]!.period_end!.getTime() - listed[0]!.period_start!.getTime()).toBeGreaterThanOrEqual(23 * 3600_000)

    const changed = await server.call((client) =>
      client.budgets.update({ path: { id: created.id }, payload: { limit_tokens: 1000, action: "warn", period: "total" } })
    )
    expect(changed).toMatchObject({ limit_usd: 5, limit_tokens: 1000, action: "warn", period: "total" })
    expect(await status(created.id)).toMatchObject({ period_start: null, period_end: null, left_tokens: 1000 })

    // Bad input: a 422 that changes nothing.
    for (
      const body of [
        { scope: "bot", period: "day", limit_usd: 1 },
        { scope: "global", target: "x", period: "day", limit_usd: 1 },
        { scope: "global", period: "day" },
        { scope: "global", period: "week", limit_usd: 1 },
        { scope: "global", period: "day", limit_usd: -1 },
        { scope: "global", period: "day", limit_usd: 1, warn_at: 1.5 },
        { scope: "global", period: "day", limit_usd: 1, colour: "red" }
      ]
    ) {
      const response = await server.request("/api/v1/admin/budgets", { method: "POST", body: JSON.stringify(body) })
      expect(response.status, JSON.stringify(body)).toBe(422)
    }
    const unlimited = await server.request(`/api/v1/admin/budgets/${created.id}`, {
      method: "PATCH",
      body: JSON.stringify({ limit_usd: null, limit_tokens: null })
    })
    expect(unlimited.status).toBe(422)
    expect((await server.request("/api/v1/admin/budgets/nope")).status).toBe(404)
    expect(await server.call((client) => client.budgets.list())).toHaveLength(1)

    const reader = await createKey(server, ["usage:read"])
    expect((await server.request("/api/v1/admin/budgets", { auth: reader.key })).status).toBe(200)
    const refused = await server.request("/api/v1/admin/budgets", {
      method: "POST",
      auth: reader.key,
      body: JSON.stringify({ scope: "global", period: "day", limit_usd: 1 })
    })
    expect(refused.status).toBe(403)
    expect((await server.request(`/api/v1/admin/budgets/${created.id}`, { method: "DELETE", auth: reader.key })).status).toBe(403)

    await server.call((client) => client.budgets.delete({ path: { id: created.id } }))
    expect((await server.request(`/api/v1/admin/budgets/${created.id}`)).status).toBe(404)
  })

  it("holds a token cap under 200 concurrent completions: the calls in flight never reserve past the limit", async () => {
    const key = await createKey(server, ["llm:completions"])
    const limit = 1000
    const budget = await newBudget(server, { scope: "key", target: key.id, period: "day", limit_tokens: limit })
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    llm.setDefaultReply({ text: "fine", usage, waitFor: held })

    const startedAt = Date.now()
    const answers: Array<Response> = []
    const calls = Array.from({ length: 200 }, () => complete(key.key).then((response) => (answers.push(response), response)))
    // Every call has either been refused or holds its reservation while the provider holds it.
    const during = await until(
      () => status(budget.id),
      (now) => now.in_flight > 0 && answers.length + now.in_flight === 200,
      60_000,
      "every call refused or in flight"
    )
    const admitted = during.in_flight
    const perCall = during.reserved_tokens / admitted
    expect(Number.isInteger(perCall)).toBe(true)
    // Exactly as many as fit: their worst cases within the limit, one more past it.
    expect(admitted * perCall).toBeLessThanOrEqual(limit)
    expect((admitted + 1) * perCall).toBeGreaterThan(limit)
    expect(answers.every((response) => response.status === 429)).toBe(true)
    expect(during.spent_tokens).toBe(0)

    release()
    const all = await Promise.all(calls)
    expect(all.filter((response) => response.status === 200)).toHaveLength(admitted)
    expect(all.filter((response) => response.status === 429)).toHaveLength(200 - admitted)
    const after = await status(budget.id)
    // Settled to what each used: the spend is the calls' usage, nothing is left reserved.
    expect(after).toMatchObject({ spent_tokens: admitted * usage.total_tokens, reserved_tokens: 0, in_flight: 0 })
    // Overspend: none, at most the reservations that were in flight.
    expect(Math.max(0, after.spent_tokens - limit)).toBeLessThanOrEqual(admitted * perCall)
    expect(after.spent_tokens).toBeLessThanOrEqual(limit)

    const refusal = all.find((response) => response.status === 429)!
    const body = await json(refusal)
    expect(body.detail).toContain(`budget ${budget.id}`)
    const retryAfter = Number(refusal.headers.get("retry-after"))
    // The period's end, seen from when the calls were made.
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((after.period_end!.getTime() - startedAt) / 1000) + 1)
    expect(retryAfter).toBeGreaterThanOrEqual(Math.floor((after.period_end!.getTime() - Date.now()) / 1000))
    // A deadline, not a duration: the 200 calls of one key take their run places one at a time (access/RunSlots.ts).
  }, scaled(180_000))

  it("refuses every surface with 429 and Retry-After once a block budget is spent, and fires each hook event once", async () => {
    hookEvents.length = 0
    const key = await createKey(server, ["llm:completions", "chat"])
    const budget = await newBudget(server, { scope: "global", period: "month", limit_tokens: 100 })
    // One call that fits its worst case and then uses more than the whole limit (a provider past max_tokens).
    llm.setDefaultReply({ text: "fine", usage: { prompt_tokens: 10, completion_tokens: 490, total_tokens: 500 } })
    expect((await complete(key.key, 10)).status).toBe(200)
    expect(await status(budget.id)).toMatchObject({ spent_tokens: 500, left_tokens: 0, state: "exceeded" })

    const named = (detail: unknown) => expect(String(detail)).toContain(`budget ${budget.id}`)
    const proxy = await complete(key.key, 10)
    expect(proxy.status).toBe(429)
    expect(Number(proxy.headers.get("retry-after"))).toBeGreaterThan(0)
    named((await json(proxy)).detail)

    const chat = await server.request("/chat", {
      method: "POST",
      auth: key.key,
      body: JSON.stringify({ message: "hi", client_id: "budget-chat" })
    })
    expect(chat.status).toBe(429)
    expect(Number(chat.headers.get("retry-after"))).toBeGreaterThan(0)
    named((await json(chat)).detail)

    const stream = await server.request("/chat/stream", {
      method: "POST",
      auth: key.key,
      body: JSON.stringify({ message: "hi", client_id: "budget-stream" })
    })
    expect(stream.status).toBe(429)
    expect(Number(stream.headers.get("retry-after"))).toBeGreaterThan(0)
    named((await json(stream)).detail)

    for (const streamed of [false, true]) {
      for (const headers of [{}, { "x-cairn-session": randomUUID() }] as Array<Record<string, string>>) {
        const openai = await server.request("/v1/chat/completions", {
          method: "POST",
          auth: key.key,
          headers,
          body: JSON.stringify({ model: "default", stream: streamed, messages: [{ role: "user", content: "hi" }] })
        })
        expect(openai.status, `stream ${streamed} ${JSON.stringify(headers)}`).toBe(429)
        expect(Number(openai.headers.get("retry-after"))).toBeGreaterThan(0)
        const body = await json(openai)
        expect(body.error).toMatchObject({ type: "requests" })
        named(body.error.message)
      }
    }
    // Nothing reached the provider after the one call that spent the budget.
    expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(0)

    await until(async () => hookEvents.length, (n) => n >= 2, 10_000, "the hook events")
    expect(hookEvents.filter((e) => e.budget === budget.id).map((e) => e.event).sort()).toEqual(["budget_exceeded", "budget_warning"])
  })

  it("counts a user's calls through a key the user made against the user's budget, and no one else's", async () => {
    const password = "the owner's own password"
    const made = await server.request("/api/v1/admin/users", {
      method: "POST",
      body: JSON.stringify({ username: `owner-${backend}`, password, role: "admin" })
    })
    expect(made.status).toBe(201)
    const owner = (await json(made)).id as string
    const signedIn = await server.request("/auth/login", {
      method: "POST",
      auth: null,
      body: JSON.stringify({ username: `owner-${backend}`, password })
    })
    const token = (await json(signedIn)).access_token as string
    const keyMade = await server.request("/api/v1/admin/api-keys", {
      method: "POST",
      auth: token,
      body: JSON.stringify({ name: "the owner's key", scopes: ["llm:completions"] })
    })
    expect(keyMade.status).toBe(201)
    const ownersKey = (await json(keyMade)).key as string
    const strangersKey = await createKey(server, ["llm:completions"])
    const budget = await newBudget(server, { scope: "user", target: owner, period: "day", limit_tokens: 100 })
    llm.setDefaultReply({ text: "fine", usage: { prompt_tokens: 10, completion_tokens: 490, total_tokens: 500 } })
    expect((await complete(ownersKey, 10)).status).toBe(200)
    expect(await status(budget.id)).toMatchObject({ spent_tokens: 500, state: "exceeded" })
    const refused = await complete(ownersKey, 10)
    expect(refused.status).toBe(429)
    expect(String((await json(refused)).detail)).toContain(`budget ${budget.id}`)
    // The owner's own sign-in is the same user; another key's calls are not theirs.
    expect((await complete(token, 10)).status).toBe(429)
    expect((await complete(strangersKey.key, 10)).status).toBe(200)
  })

  it("ends a stream whose model call does not fit the budget with an error event of code budget_exceeded", async () => {
    // Left: 1000 tokens; a turn's worst case is its prompt plus LLM_DEFAULT_MAX_TOKENS (4000).
    const budget = await newBudget(server, { scope: "bot", target: "default", period: "day", limit_tokens: 1000 })
    const controller = new AbortController()
    const response = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify({ message: "hi", client_id: "budget-midstream" }),
      signal: controller.signal
    })
    expect(response.status).toBe(200)
    const events = await readSse(response, controller).until((event) => event.data.type === "response")
    const error = events.find((event) => event.data.type === "error")
    expect(error?.data).toMatchObject({ type: "error", code: "budget_exceeded" })
    expect(String(error?.data.message)).toContain(`budget ${budget.id}`)
    expect(await status(budget.id)).toMatchObject({ spent_tokens: 0, reserved_tokens: 0, in_flight: 0 })
  })

  it("answers a blocking chat whose later model call the budget refuses with 429, Retry-After and the budget named", async () => {
    // Room when the run starts (the admission's look), none for the turn's worst case (prompt + 4000).
    const budget = await newBudget(server, { scope: "bot", target: "default", period: "day", limit_tokens: 1000 })
    const response = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({ message: "hi", client_id: "budget-blocking" })
    })
    expect(response.status).toBe(429)
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0)
    expect((await json(response)).detail).toContain(`budget ${budget.id}`)
    expect(await status(budget.id)).toMatchObject({ spent_tokens: 0, reserved_tokens: 0, in_flight: 0 })
  })

  it("checks embedding calls against the budgets only with BUDGET_EMBEDDINGS on", async () => {
    const budget = await newBudget(server, { scope: "global", period: "day", limit_tokens: 5 })
    const embed = (input: ReadonlyArray<string>) =>
      server.run(Effect.flatMap(Llm, (llm) => Effect.either(llm.embed({ model: "fake-embedding", input, usage: { source: "embedding" } }))))
    const setEmbeddings = async (on: boolean) =>
      expect((await server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ BUDGET_EMBEDDINGS: on }) })).status)
        .toBe(200)
    const long = ["one two three four five six seven eight nine ten"]

    // Off (the default): recorded, never checked.
    expect(Either.isRight(await embed(long))).toBe(true)
    expect(await status(budget.id)).toMatchObject({ spent_tokens: 0, in_flight: 0 })
    await setEmbeddings(true)
    try {
      const refused = await embed(long)
      expect(Either.isLeft(refused) && refused.left).toMatchObject({ kind: "budget_exceeded" })
      expect(Either.isLeft(refused) && refused.left.detail).toContain(`budget ${budget.id}`)
      // A small input fits: reserved first, then settled to the tokens the provider counted.
      expect(Either.isRight(await embed(["hi there"]))).toBe(true)
      expect(await status(budget.id)).toMatchObject({ spent_tokens: 2, reserved_tokens: 0, in_flight: 0 })
    } finally {
      await setEmbeddings(false)
    }
  })

  it("warns without refusing past a warn budget, once per period", async () => {
    hookEvents.length = 0
    const key = await createKey(server, ["llm:completions"])
    const budget = await newBudget(server, { scope: "key", target: key.id, period: "day", limit_tokens: 100, action: "warn", warn_at: 0.5 })
    for (let i = 0; i < 6; i++) expect((await complete(key.key, 10)).status).toBe(200)
    expect(await status(budget.id)).toMatchObject({ spent_tokens: 150, left_tokens: 0, state: "exceeded", used: 1.5 })
    await until(async () => hookEvents.length, (n) => n >= 2, 10_000, "the hook events")
    expect(hookEvents.map((e) => `${e.event} ${e.budget}`).sort()).toEqual([`budget_exceeded ${budget.id}`, `budget_warning ${budget.id}`])
  })
})

describe.each(backends)("budgets across a restart (%s)", (backend) => {
  it("keeps the budget and its spend", async () => {
    const llm = await startFakeLlm({ record: false, defaultReply: { text: "fine", usage } })
    const db = await createTestDatabase(backend)
    const first = await startServer({ backend, env: fakeLlmEnv(llm), db })
    try {
      const budget = await newBudget(first, { scope: "global", period: "total", limit_tokens: 60 })
      for (let i = 0; i < 2; i++) {
        const response = await completeOn(first, undefined, 10)
        expect(response.status).toBe(200)
      }
      await first.close()
      const second = await startServer({ backend, env: fakeLlmEnv(llm), db })
      try {
        expect(await second.call((client) => client.budgets.get({ path: { id: budget.id } }))).toMatchObject({
          spent_tokens: 50,
          left_tokens: 10
        })
        const refused = await completeOn(second, undefined, 10)
        expect(refused.status).toBe(429)
      } finally {
        await second.close()
      }
    } finally {
      await db.drop()
      await llm.close()
    }
  })
})
