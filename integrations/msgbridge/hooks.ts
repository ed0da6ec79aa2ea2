import { type BoundTarget, defineHooks } from "../../src/sdk/index.ts"
import { resumeEntry } from "./catchup.ts"
import { legacyClient } from "./legacy.ts"
import { registered, useContext } from "./state.ts"

/** A channel bound to `msgbridge:<chat guid>` is reached in that chat (a delegated bot's answer). */
const chatOfBinding = (target: BoundTarget) => ({ chat_guid: target.external_id })

export default defineHooks((cairn) => {
  cairn.registerMetadata({ integration_type: "msgbridge", client_id_prefix: "msgbridge:", dispatch_config: chatOfBinding })
  registered.metadata = true
  useContext(cairn)
  cairn.registerWorker(legacyClient)
  // A dead message a person retried is decided at once, not at the next catch-up.
  cairn.inbound.onRetry(async (entry) => void (await resumeEntry(cairn, entry, "retry")))
})
