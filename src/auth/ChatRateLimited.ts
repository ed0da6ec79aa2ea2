/**
 * An endpoint under RATE_LIMIT_CHAT (in addition to the default limit) says so with this annotation
 * on its definition, next to its `RequiredScope`; the catalogue reflects it per entry and the rate
 * limiter reads it from there, so no list of chat routes is kept anywhere else.
 */
import { Context } from "effect"

export class ChatRateLimited extends Context.Tag("cairn/ChatRateLimited")<ChatRateLimited, boolean>() {}
