/**
 * Steady mixed traffic through the balancer while a fault happens: blocking chats, streams (cut
 * ones rejoined through the balancer, so on another host), and queued tasks (each loop's next once
 * its last has ended). Every request that was answered 2xx is an acknowledgement, checked afterwards
 * against what the database kept.
 */
import { API_KEY } from "../support/server.ts"
import { sleep } from "../support/time.ts"

export interface Ack {
  readonly kind: "chat" | "stream" | "task"
  readonly session: string
  readonly prompt: string
  readonly task?: string
}

export interface Tally {
  requests: number
  failed: number
  readonly failures: Array<string>
  readonly acks: Array<Ack>
  streams: number
  streamsCut: number
  streamsRejoined: number
  /** Streams whose run ended with an `error` event (its process lost the database mid-turn), not an answer. */
  streamsEndedInError: number
}

const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" }

export const call = (baseUrl: string, path: string, init: RequestInit = {}, timeoutMs = 60_000) =>
  fetch(`${baseUrl}${path}`, { ...init, headers: { ...headers, ...init.headers }, signal: init.signal ?? AbortSignal.timeout(timeoutMs) })

interface SseFrame {
  readonly id: number | undefined
  readonly type: string | undefined
}

/** The frames of an SSE body until it ends or breaks: whether it reached its end (`response` or `error`), the last id. */
const readFrames = async (response: Response) => {
  let lastId: number | undefined
  let ended = false
  let errored = false
  let buffer = ""
  const decoder = new TextDecoder()
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true })
      let at: number
      while ((at = buffer.indexOf("\n\n")) >= 0) {
        const frame = parseFrame(buffer.slice(0, at))
        buffer = buffer.slice(at + 2)
        if (frame.id !== undefined) lastId = frame.id
        if (frame.type === "response") ended = true
        if (frame.type === "error") ended = errored = true
      }
    }
  } catch {
    // cut: the host went away
  }
  return { ended, errored, lastId }
}

const parseFrame = (text: string): SseFrame => {
  let id: number | undefined
  let type: string | undefined
  for (const line of text.split("\n")) {
    if (line.startsWith("id: ")) id = Number(line.slice(4))
    if (line.startsWith("data: ")) {
      try {
        type = (JSON.parse(line.slice(6)) as { type?: string }).type
      } catch {
        // not JSON
      }
    }
  }
  return { id, type }
}

/** Starts the loops; `stop` ends them after their current request and answers the tally. */
export const startTraffic = (baseUrl: string, label: string) => {
  const tally: Tally = {
    requests: 0,
    failed: 0,
    failures: [],
    acks: [],
    streams: 0,
    streamsCut: 0,
    streamsRejoined: 0,
    streamsEndedInError: 0
  }
  let running = true
  let n = 0
  const fail = (what: string) => {
    tally.failed++
    if (tally.failures.length < 20) tally.failures.push(what)
  }
  /** One request: counted, and a failure when it throws or answers other than 2xx. */
  const attempt = async <A>(what: string, send: () => Promise<Response>, use: (response: Response) => Promise<A>) => {
    tally.requests++
    try {
      const response = await send()
      if (!response.ok) {
        fail(`${what}: ${response.status} ${(await response.text()).slice(0, 120)}`)
        return undefined
      }
      return await use(response)
    } catch (error) {
      fail(`${what}: ${String(error).slice(0, 120)}`)
      return undefined
    }
  }
  const chat = async () => {
    const prompt = `${label}-chat-${++n}`
    const body = JSON.stringify({ message: prompt, client_id: prompt })
    await attempt("chat", () => call(baseUrl, "/chat", { method: "POST", body }), async (response) => {
      const { session_id } = (await response.json()) as { session_id: string }
      tally.acks.push({ kind: "chat", session: session_id, prompt })
    })
  }
  const stream = async () => {
    const prompt = `${label}-stream-${++n}`
    const body = JSON.stringify({ message: prompt, client_id: prompt })
    tally.streams++
    await attempt("stream", () => call(baseUrl, "/chat/stream", { method: "POST", body }), async (response) => {
      const session = response.headers.get("x-session-id")!
      tally.acks.push({ kind: "stream", session, prompt })
      let seen = await readFrames(response)
      const ended = () => {
        if (seen.errored) tally.streamsEndedInError++
      }
      if (seen.ended) return ended()
      tally.streamsCut++
      // Rejoined through the balancer (another host), from the last event seen, until it ends.
      for (let tries = 0; tries < 20 && !seen.ended; tries++) {
        const rejoin = await call(baseUrl, `/api/v1/sessions/${session}/stream`, {
          headers: seen.lastId === undefined ? {} : { "last-event-id": String(seen.lastId) }
        }).catch(() => undefined)
        if (rejoin?.ok) seen = await readFrames(rejoin)
        else await sleep(500)
      }
      if (seen.ended) {
        tally.streamsRejoined++
        ended()
      } else fail(`stream ${session}: not rejoined`)
    })
  }
  const task = async () => {
    const prompt = `${label}-task-${++n}`
    const session = await attempt(
      "session",
      () => call(baseUrl, "/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: prompt }) }),
      async (response) => ((await response.json()) as { session_id: string }).session_id
    )
    if (!session) return
    const body = JSON.stringify({ content: prompt, source: "load", run_agent: true, notify: false })
    const task = await attempt(
      "task",
      () => call(baseUrl, `/api/v1/sessions/${session}/messages`, { method: "POST", body }),
      async (response) => {
        const { task_id } = (await response.json()) as { task_id: string }
        tally.acks.push({ kind: "task", session, prompt, task: task_id })
        return task_id
      }
    )
    if (task) await taskSettled(task)
  }
  /**
   * Until the loop's task has ended (or the traffic stops): a client that queues its next task once
   * the last is done. Queued at a fixed pace instead, a machine slower than the pace piles up runs
   * until the credential's run limit answers 429, which is load, not a fault. Not counted as traffic.
   */
  const taskSettled = async (task: string) => {
    while (running) {
      const response = await call(baseUrl, `/api/v1/tasks/${task}`).catch(() => undefined)
      const status = response?.ok ? ((await response.json()) as { status: string }).status : undefined
      if (status !== undefined && status !== "pending" && status !== "running") return
      await sleep(250)
    }
  }
  const loop = async (step: () => Promise<void>, pauseMs: number) => {
    while (running) {
      await step()
      await sleep(pauseMs)
    }
  }
  const loops = [loop(chat, 150), loop(chat, 150), loop(stream, 150), loop(task, 300)]
  return {
    tally,
    stop: async () => {
      running = false
      await Promise.all(loops)
      return tally
    }
  }
}

/** The assistant messages after the user message at `at`, up to the next user message. */
const answersTo = (messages: ReadonlyArray<{ readonly role: string }>, at: number) => {
  let answers = 0
  for (let i = at + 1; i < messages.length && messages[i]!.role !== "user"; i++) {
    if (messages[i]!.role === "assistant") answers++
  }
  return answers
}

/**
 * What the database kept of the acknowledgements once every task has ended: messages lost (an
 * acknowledged user message missing from its session) and tasks run twice (a task's prompt
 * answered more than once). Tasks still unfinished by the deadline are counted as such.
 */
export const audit = async (baseUrl: string, acks: ReadonlyArray<Ack>, deadlineMs: number) => {
  const deadline = Date.now() + deadlineMs
  let lost = 0
  let twice = 0
  let unfinished = 0
  /** The unfinished tasks as the API last showed them, for the failure message. */
  const stuck: Array<string> = []
  for (const ack of acks) {
    if (ack.task) {
      for (;;) {
        const task = await call(baseUrl, `/api/v1/tasks/${ack.task}`).then((r) => r.json() as Promise<{ status: string }>).catch(() =>
          undefined
        )
        if (task && task.status !== "pending" && task.status !== "running") break
        if (Date.now() > deadline) {
          unfinished++
          stuck.push(`${ack.session}: ${JSON.stringify(task)}`)
          break
        }
        await sleep(250)
      }
    }
    const messages = await call(baseUrl, `/api/v1/sessions/${ack.session}/messages`)
      .then((r) => r.json() as Promise<Array<{ role: string; content: string }>>)
    const at = messages.findIndex((m) => m.role === "user" && m.content === ack.prompt)
    if (at < 0) lost++
    if (ack.kind === "task" && answersTo(messages, at) > 1) twice++
  }
  return { lost, twice, unfinished, stuck }
}

/**
 * Probes the balancer with a small chat every `everyMs` from the fault on, without waiting for the
 * one before: the time from `since` until the first probe after which every probe was answered
 * within `slowMs` (0 when none failed), i.e. until the cluster served again.
 */
export const startProbe = (baseUrl: string, label: string, since: number, everyMs = 250, slowMs = 5000) => {
  let lastFailedSent = 0
  const pending = new Set<Promise<void>>()
  let n = 0
  const probe = () => {
    const prompt = `${label}-probe-${++n}`
    const sent = Date.now()
    const body = JSON.stringify({ message: prompt, client_id: prompt })
    const done = call(baseUrl, "/chat", { method: "POST", body }, 30_000)
      .then((r) => r.ok && Date.now() - sent <= slowMs)
      .catch(() => false)
      .then((ok) => {
        if (!ok) lastFailedSent = Math.max(lastFailedSent, sent)
        pending.delete(done)
      })
    pending.add(done)
  }
  const timer = setInterval(probe, everyMs)
  probe()
  return {
    stop: async () => {
      clearInterval(timer)
      await Promise.all([...pending])
      return lastFailedSent === 0 ? 0 : lastFailedSent + everyMs - since
    }
  }
}
