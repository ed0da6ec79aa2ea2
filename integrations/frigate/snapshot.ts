/** Snapshots from Frigate's HTTP API: `FRIGATE_URL/api/events/<id>/snapshot.jpg`, as a run's image. */
import type { IntegrationContext, RunImage } from "../../src/sdk/index.ts"
import type { FrigateConfig } from "./config.ts"

const jpeg = (bytes: Uint8Array) => bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff
const png = (bytes: Uint8Array) => bytes.length > 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47

/** The snapshot of an event as an image, or why there is none. */
export const fetchSnapshot = async (
  cairn: IntegrationContext,
  config: FrigateConfig,
  eventId: string,
  signal?: AbortSignal
): Promise<{ readonly ok: true; readonly image: RunImage } | { readonly ok: false; readonly error: string }> => {
  if (!config.frigateUrl) return { ok: false, error: "FRIGATE_URL is not set" }
  const url = `${config.frigateUrl}/api/events/${encodeURIComponent(eventId)}/snapshot.jpg?bbox=1`
  try {
    const response = await cairn.http.request(url, { timeoutMs: config.snapshotTimeoutMs, signal, retries: 1 })
    if (!response.ok) return { ok: false, error: `Frigate answered ${response.status} for the snapshot of ${eventId}` }
    const bytes = response.bytes
    const mime_type = jpeg(bytes) ? "image/jpeg" : png(bytes) ? "image/png" : undefined
    if (!mime_type) return { ok: false, error: `The snapshot of ${eventId} is not a JPEG or PNG image` }
    return {
      ok: true,
      image: { mime_type, name: `${eventId}.${mime_type === "image/jpeg" ? "jpg" : "png"}`, data: Buffer.from(bytes).toString("base64") }
    }
  } catch (error) {
    return {
      ok: false,
      error: `The snapshot of ${eventId} could not be fetched: ${error instanceof Error ? error.message : String(error)}`
    }
  }
}

/** Frigate's version (`/api/version`): whether its HTTP API answers. */
export const frigateVersion = async (cairn: IntegrationContext, config: FrigateConfig) => {
  if (!config.frigateUrl) return { ok: false as const, error: "FRIGATE_URL is not set" }
  try {
    const response = await cairn.http.request(`${config.frigateUrl}/api/version`, { timeoutMs: 5000, retries: 0 })
    if (!response.ok) return { ok: false as const, error: `Frigate answered ${response.status} for /api/version` }
    return { ok: true as const, version: response.text.trim() }
  } catch (error) {
    return { ok: false as const, error: error instanceof Error ? error.message : String(error) }
  }
}
