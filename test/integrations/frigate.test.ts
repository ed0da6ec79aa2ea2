/**
 * The Frigate integration against a real Mosquitto broker and a fake of Frigate's HTTP API, through
 * the whole server on both databases: a detection becomes one task whose model input holds the
 * snapshot, a burst within the cool-down makes one task, the filters (camera, label, score) make
 * none, and a restart mid-burst (events published while the server is down, redelivered ones)
 * handles no event twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type FrigateServer, snapshotJpeg, startFrigateServer } from "../fixtures/frigateServer.ts"
import { type Mosquitto, startMosquitto } from "../fixtures/mosquitto.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

interface Task {
  readonly id: string
  readonly source: string
  readonly prompt: string
  readonly status: string
  readonly execution_config: Record<string, unknown>
}

let sequence = 0
/** A Frigate event message, as Frigate publishes it on frigate/events. */
const frigateEvent = (
  type: "new" | "update" | "end",
  camera: string,
  options: { readonly id?: string; readonly label?: string; readonly score?: number; readonly zones?: ReadonlyArray<string> } = {}
) => {
  sequence += 1
  const id = options.id ?? `${(Date.now() / 1000).toFixed(6)}-${camera}${sequence}`
  const after = {
    id,
    camera,
    frame_time: Date.now() / 1000,
    label: options.label ?? "person",
    sub_label: null,
    top_score: options.score ?? 0.91,
    score: options.score ?? 0.91,
    false_positive: false,
    start_time: Date.now() / 1000,
    end_time: type === "end" ? Date.now() / 1000 : null,
    current_zones: options.zones ?? [],
    entered_zones: options.zones ?? [],
    has_snapshot: true,
    has_clip: false
  }
  return { id, message: { type, before: { ...after, top_score: 0.5 }, after } }
}

describe.each(backends)("the frigate integration (%s)", (backend) => {
  let mosquitto: Mosquitto
  let frigate: FrigateServer
  let llm: FakeLlm
  let db: TestDatabase
  let server: TestServer
  const topic = `frigate-${backend}-${process.pid}/events`
  const env = () => ({
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "sk-test-fake-key-1234567890",
    DEFAULT_MODEL: "fake-model",
    LLM_MAX_RETRIES: "0",
    FRIGATE_MQTT_URL: mosquitto.url,
    FRIGATE_MQTT_TOPIC: topic,
    FRIGATE_MQTT_CLIENT_ID: `cairn-frigate-test-${backend}-${process.pid}`,
    FRIGATE_URL: frigate.url,
    FRIGATE_CAMERAS: "front_door,driveway,garden,yard",
    FRIGATE_LABELS: "person,car",
    FRIGATE_MIN_SCORE: "0.7",
    FRIGATE_COOLDOWN_SECONDS: "3600"
  })
  const status = async () => json(await server.request("/integrations/frigate/status"))
  const tasks = async (): Promise<Array<Task>> => {
    const listed = await json(await server.request("/api/v1/tasks?limit=500"))
    return (Array.isArray(listed) ? listed : listed.tasks).filter((task: Task) => task.source === "integration:frigate")
  }
  const tasksOf = async (camera: string) => (await tasks()).filter((task) => task.prompt.includes(`camera ${camera} `))
  const publish = (messages: ReadonlyArray<unknown>) => mosquitto.publish(topic, messages)
  /** Waits until the worker has taken `count` more messages than `before` (the status counts every one). */
  const received = async (before: number, count: number) =>
    waitFor(async () => ((await status()).counts.received >= before + count ? true : undefined), `${count} messages received`)

  beforeAll(async () => {
    mosquitto = await startMosquitto()
    frigate = await startFrigateServer()
    llm = await startFakeLlm({ defaultReply: { text: "Someone is at the door." } })
    db = await createTestDatabase(backend, { migrated: true })
    server = await startServer({ backend, db, env: env() })
    const channel = await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "cameras", bot_id: "default" }) })
    )
    const bound = await server.request(`/api/v1/channels/${channel.id}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "frigate", client_id: "frigate:*" })
    })
    expect(bound.status).toBe(201)
    await waitFor(async () => ((await status()).mqtt.connected ? true : undefined), "the worker subscribed")
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
    await frigate?.close()
    await mosquitto?.close()
  })

  it("a detection becomes one task whose model input holds the snapshot", async () => {
    const detection = frigateEvent("new", "front_door", { zones: ["porch"] })
    await publish([detection.message])
    const [task] = await waitFor(async () => {
      const found = await tasksOf("front_door")
      return found.length > 0 && found[0]!.status === "complete" ? found : undefined
    }, "the detection's task done")
    expect(task!.execution_config).toMatchObject({ skills: ["integrations/frigate/detection"], tools: ["get_snapshot"] })
    expect(String(task!.execution_config.system_preamble)).toContain("camera: front_door")
    const sent = llm.requestsTo("/v1/chat/completions").map((request) => JSON.stringify(request.body))
    const input = sent.find((body) => body.includes(detection.id))
    expect(input).toBeDefined()
    expect(input).toContain(`data:image/jpeg;base64,${snapshotJpeg.toString("base64")}`)
    expect(input).toContain("label: person")
    expect(input).toContain("zones: porch")
    expect(input).toContain("\"get_snapshot\"")
    expect(frigate.requests.some((request) => request.path === `/api/events/${detection.id}/snapshot.jpg`)).toBe(true)
    expect(await tasksOf("front_door")).toHaveLength(1)
  })

  it("a burst of 20 detections of one camera within the cool-down makes one task", async () => {
    const before = (await status()).counts
    await publish(Array.from({ length: 20 }, () => frigateEvent("new", "driveway", { label: "car" }).message))
    await received(before.received, 20)
    expect(await tasksOf("driveway")).toHaveLength(1)
    expect((await status()).counts.suppressed - before.suppressed).toBe(19)
  })

  it("a camera or label not wanted, or a score under the minimum, makes none", async () => {
    const before = (await status()).counts
    await publish([
      frigateEvent("new", "garden", { label: "cat" }).message,
      frigateEvent("new", "backyard").message,
      frigateEvent("new", "garden", { score: 0.55 }).message,
      frigateEvent("update", "garden", { score: 0.6 }).message
    ])
    await received(before.received, 4)
    expect(await tasksOf("garden")).toHaveLength(0)
    expect(await tasksOf("backyard")).toHaveLength(0)
    expect((await status()).counts.filtered - before.filtered).toBe(4)
    // The same camera passes with a person above the minimum.
    const passing = frigateEvent("new", "garden", { score: 0.8 })
    await publish([passing.message])
    const found = await waitFor(async () => {
      const list = await tasksOf("garden")
      return list.length > 0 ? list : undefined
    }, "the passing detection's task")
    expect(found).toHaveLength(1)
    expect(found[0]!.prompt).toContain(passing.id)
  })

  it("a restart mid-burst handles no event twice", async () => {
    const put = await server.request("/api/v1/admin/integrations/frigate/settings", {
      method: "PUT",
      body: JSON.stringify({ FRIGATE_COOLDOWN_SECONDS: "0" })
    })
    expect(put.status).toBe(200)
    const events = Array.from({ length: 10 }, () => frigateEvent("new", "yard"))
    const before = (await status()).counts
    await publish(events.slice(0, 5).map((event) => event.message))
    await received(before.received, 5)
    await server.close()
    // While the server is down: three new events and one already handled, kept by the broker for the session.
    await publish([...events.slice(5, 8).map((event) => event.message), events[2]!.message])
    server = await startServer({ backend, db, env: { ...env(), FRIGATE_COOLDOWN_SECONDS: "0" } })
    await publish([events[8]!.message, events[9]!.message, events[3]!.message, events[9]!.message])
    await received(before.received, 13)
    const yard = await tasksOf("yard")
    for (const event of events) expect(yard.filter((task) => task.prompt.includes(event.id)), event.id).toHaveLength(1)
    expect(yard).toHaveLength(10)
    expect((await status()).counts.duplicates - before.duplicates).toBeGreaterThanOrEqual(3)
  })
})
