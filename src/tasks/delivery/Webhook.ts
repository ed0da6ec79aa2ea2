/**
 * The webhook dispatcher's transport: a JSON POST through the outbound guard (http/Outbound.ts): a
 * private or loopback target is refused unless WEBHOOK_ALLOWED_HOSTS allows it. The target is a
 * credential as a whole (a Slack incoming webhook's secret is its path): no error this answers
 * shows any of it past its host. Each POST carries an
 * `Idempotency-Key`, the same on every retry of one delivery, so a receiver that got a POST whose
 * answer was lost (a timeout, a 5xx after it acted) can recognise the retry and not act twice.
 */
import { type AllowList, guardedRequest, OutboundRefused } from "../../http/Outbound.ts"
import { scrubWholeUrl } from "../../secrets/SealedUrl.ts"

/** An error about `target` with the target past its host masked; a refusal stays a refusal (no retry). */
const scrubbed = (error: unknown, target: string): Error => {
  const message = scrubWholeUrl(error instanceof Error ? error.message : String(error), target)
  return error instanceof OutboundRefused ? new OutboundRefused({ message }) : new Error(message)
}

/** POSTs JSON to a checked target; resolves on 2xx, rejects otherwise. */
export const postJson = async (
  target: string,
  payload: unknown,
  options: { readonly allowed: AllowList; readonly timeoutMs: number; readonly idempotencyKey: string }
): Promise<number> => {
  const response = await guardedRequest(target, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": "cairn-dispatch", "idempotency-key": options.idempotencyKey },
    body: JSON.stringify(payload),
    timeoutMs: options.timeoutMs,
    allowed: options.allowed
  }).catch((error: unknown) => Promise.reject(scrubbed(error, target)))
  if (response.status >= 200 && response.status < 300) return response.status
  throw new Error(`Webhook answered ${response.status}`)
}
