/**
 * The webhook dispatcher's transport: a JSON POST through the outbound guard (http/Outbound.ts): a
 * private or loopback target is refused unless WEBHOOK_ALLOWED_HOSTS allows it.
 */
import { guardedRequest, type AllowList } from "../../http/Outbound.ts"

/** POSTs JSON to a checked target; resolves on 2xx, rejects otherwise. */
export const postJson = async (
  target: string,
  payload: unknown,
  options: { readonly allowed: AllowList; readonly timeoutMs: number }
): Promise<number> => {
  const response = await guardedRequest(target, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": "cairn-dispatch" },
    body: JSON.stringify(payload),
    timeoutMs: options.timeoutMs,
    allowed: options.allowed
  })
  if (response.status >= 200 && response.status < 300) return response.status
  throw new Error(`Webhook answered ${response.status}`)
}
