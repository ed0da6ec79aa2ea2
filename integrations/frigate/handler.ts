/**
 * One MQTT message: a Frigate event that passes the filters, is new, and finds a bound channel out
 * of its cool-down becomes one task there, with the detection's execution config (a preamble, the
 * `get_snapshot` tool, the detection skill) and the snapshot as an image of its message. The event
 * is claimed (`<id>:<phase>` in the store) before the task starts, so it is never handled twice.
 */
import type { IntegrationContext, RunImage } from "../../src/sdk/index.ts"
import type { FrigateConfig } from "./config.ts"
import { bindingTakes, type Detection, messageOf, parseEvent, preamble, refusal } from "./events.ts"
import { fetchSnapshot } from "./snapshot.ts"
import type { FrigateStore } from "./store.ts"

export const detectionSkill = "integrations/frigate/detection"
export const snapshotTool = "get_snapshot"

export type Outcome =
  | "invalid"
  | "ignored"
  | "duplicate"
  | "filtered"
  | "unbound"
  | "suppressed"
  | "task"

/** The phase an event message stands for, under the trigger: `detected` (new, update) or `end`; null to ignore. */
const phaseOf = (detection: Detection, trigger: FrigateConfig["trigger"]) =>
  trigger === "end" ? (detection.type === "end" ? "end" : null) : detection.type === "end" ? null : "detected"

const startTask = async (
  cairn: IntegrationContext,
  config: FrigateConfig,
  channelId: string,
  detection: Detection,
  image: RunImage | undefined
) =>
  cairn.runs.start({
    channelId,
    content: messageOf(detection),
    executionConfig: {
      system_preamble: preamble(detection, image !== undefined),
      skills: [detectionSkill],
      tools: [snapshotTool],
      ...(config.model ? { model_override: config.model } : {})
    },
    channelDispatch: true,
    ...(image ? { images: [image] } : {}),
    metadata: { frigate_event_id: detection.id, camera: detection.camera, label: detection.label, score: detection.score }
  })

/** Handles one message's payload; throws only when a task could not be started (the message is then not acknowledged). */
export const handleEvent = async (
  cairn: IntegrationContext,
  config: FrigateConfig,
  store: FrigateStore,
  payload: string,
  signal?: AbortSignal
): Promise<Outcome> => {
  const parsed = parseEvent(payload)
  if (!parsed.ok) {
    await store.count({ received: 1, invalid: 1 })
    return "invalid"
  }
  const detection = parsed.detection
  const phase = phaseOf(detection, config.trigger)
  const lastEvent = { id: detection.id, camera: detection.camera, label: detection.label, at: new Date().toISOString() }
  if (phase === null) {
    await store.count({ received: 1, ignored: 1 }, { last_event: lastEvent })
    return "ignored"
  }
  const key = `${detection.id}:${phase}`
  if (await store.isHandled(key)) {
    await store.count({ received: 1, duplicates: 1 })
    return "duplicate"
  }
  // Not claimed: a later update of the same object (a better score, a zone entered) may pass.
  if (refusal(detection, config.filters) !== null) {
    await store.count({ received: 1, filtered: 1 }, { last_event: lastEvent })
    return "filtered"
  }
  const bound = (await cairn.channels.bound()).filter(({ binding }) => bindingTakes(binding.client_id, detection.camera))
  const open: Array<string> = []
  for (const { channel } of bound) if (!(await store.cooling(channel.id, detection.camera))) open.push(channel.id)
  if (open.length === 0) {
    await store.claim(key)
    const outcome = bound.length === 0 ? "unbound" : "suppressed"
    await store.count({ received: 1, [outcome]: 1 }, { last_event: lastEvent })
    return outcome
  }
  const snapshot = detection.hasSnapshot
    ? await fetchSnapshot(cairn, config, detection.id, signal)
    : { ok: false as const, error: "no snapshot" }
  if (!snapshot.ok) cairn.logger.warn(`Frigate: event ${detection.id} goes without its snapshot: ${snapshot.error}`)
  if (!(await store.claim(key))) {
    await store.count({ received: 1, duplicates: 1 })
    return "duplicate"
  }
  let started = 0
  let lastTask = null
  for (const channelId of open) {
    if (!(await store.startCooldown(channelId, detection.camera, detection.id, config.cooldownMs))) continue
    try {
      const task = await startTask(cairn, config, channelId, detection, snapshot.ok ? snapshot.image : undefined)
      started += 1
      lastTask = { task_id: task.task_id, channel_id: channelId, event_id: detection.id, at: new Date().toISOString() }
    } catch (error) {
      // Nothing started yet: the event and the cool-down are released, so the broker's redelivery tries again.
      await store.endCooldown(channelId, detection.camera)
      if (started === 0) await store.release(key)
      throw error
    }
  }
  const outcome = started > 0 ? "task" : "suppressed"
  await store.count({ received: 1, ...(started > 0 ? { tasks: started } : { suppressed: 1 }) }, {
    last_event: lastEvent,
    ...(lastTask ? { last_task: lastTask } : {})
  })
  cairn.logger.info(`Frigate: ${detection.label} on ${detection.camera} (event ${detection.id}): ${started} task(s)`)
  return outcome
}
